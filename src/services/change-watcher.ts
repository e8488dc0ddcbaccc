/**
 * Notices changes other processes made (the CLI, other instances) by polling the version
 * counters, one indexed read per interval. When the access version moved, the access change log
 * says what changed and only those keys leave the key cache; on a catalog change the catalog is
 * reloaded and swapped. Storage errors are logged once per outage and the previous state keeps
 * serving; the next successful poll catches up from the last change seen, so none is missed.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import { accessChangesAfter } from '../storage/access-change-repository.js'
import type { Database } from '../storage/tables.js'
import { readVersions, type Versions } from '../storage/meta-repository.js'
import type { CatalogState } from './catalog-state.js'
import type { KeyCache } from './key-cache.js'

const KEY_CHANGES: ReadonlySet<string> = new Set(['key_revoked', 'key_rolled'])

/** Changes read per poll; a larger burst between two polls empties the key cache once instead. */
const CHANGES_PER_POLL = 1000

export class ChangeWatcher {
  readonly #db: Kysely<Database>
  readonly #catalog: CatalogState
  readonly #keys: KeyCache
  readonly #log: FastifyBaseLogger
  #seen: Versions | undefined
  #timer: NodeJS.Timeout | undefined
  #running: Promise<void> | undefined
  #failing = false

  constructor(options: { db: Kysely<Database>; catalog: CatalogState; keys: KeyCache; log: FastifyBaseLogger }) {
    this.#db = options.db
    this.#catalog = options.catalog
    this.#keys = options.keys
    this.#log = options.log
  }

  /** Notes the versions now and polls every `intervalMs`; with 0, only when `check` is called. */
  async start(intervalMs: number): Promise<void> {
    this.#seen = await readVersions(this.#db)
    if (intervalMs <= 0) return
    this.#timer = setInterval(() => void this.check(), intervalMs)
    this.#timer.unref()
  }

  /** Looks for changes now; concurrent calls share one check. Tests call it instead of waiting. */
  check(): Promise<void> {
    this.#running ??= this.#check().finally(() => (this.#running = undefined))
    return this.#running
  }

  async #check(): Promise<void> {
    try {
      const now = await readVersions(this.#db)
      const seen = this.#seen
      let access = now.access
      if (seen === undefined) this.#keys.clear()
      else if (now.access !== seen.access) access = await this.#applyAccessChanges(seen.access, now.access)
      if (seen === undefined || now.catalog !== seen.catalog || now.catalog !== this.#catalog.current.version) {
        await this.#catalog.reload()
        this.#log.info({ catalogVersion: this.#catalog.current.version }, 'catalog reloaded')
      }
      this.#seen = { ...now, access }
      if (this.#failing) this.#log.info('storage reachable again; change polling resumed')
      this.#failing = false
    } catch (error) {
      if (!this.#failing) this.#log.warn({ err: error }, 'change polling failed; serving the state already loaded')
      this.#failing = true
    }
  }

  /**
   * Evicts what the changes after `seen` name, up to at least `target`, and returns the last
   * sequence number handled. Every version bump from `seen + 1` to `target` should have its log
   * entry; one missing (a writer that predates the log, the version moved backwards after a
   * restore, or a burst over CHANGES_PER_POLL) empties the key cache, which is always safe.
   */
  async #applyAccessChanges(seen: number, target: number): Promise<number> {
    const changes = target > seen ? await accessChangesAfter(this.#db, seen, CHANGES_PER_POLL) : []
    let next = seen + 1
    const changedKeys: string[] = []
    for (const change of changes) {
      if (change.seq !== next) break
      // A key revoked or rolled: that key alone; a kind this code does not know is one that may
      // concern the whole organisation, which is always safe to forget.
      if (KEY_CHANGES.has(change.kind) && change.key_id !== null) changedKeys.push(change.key_id)
      else this.#keys.evictOrganisation(change.organisation_id)
      next++
    }
    // Together: the cache looks for the changed keys in one pass over its slots.
    if (changedKeys.length > 0) this.#keys.evictKeys(changedKeys)
    if (next - 1 >= target) return next - 1
    this.#log.warn({ seen, target, logged: next - 1 }, 'access changes not all in the change log; key cache emptied')
    this.#keys.clear()
    return target
  }

  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer)
    this.#timer = undefined
  }
}
