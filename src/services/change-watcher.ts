/**
 * Notices changes other processes made (the CLI, other instances) by polling the version
 * counters, one indexed read per interval. On an access change the key cache is emptied; on a
 * catalog change the catalog is reloaded and swapped. Storage errors are logged once per outage
 * and the previous state keeps serving.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { Database } from '../storage/database.js'
import { readVersions, type Versions } from '../storage/meta-repository.js'
import type { CatalogState } from './catalog-state.js'
import type { KeyCache } from './key-cache.js'

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

  async start(intervalMs: number): Promise<void> {
    this.#seen = await readVersions(this.#db)
    this.#timer = setInterval(() => void this.check(), intervalMs)
    this.#timer.unref()
  }

  /** Looks for changes now; concurrent calls share one check. */
  check(): Promise<void> {
    this.#running ??= this.#check().finally(() => (this.#running = undefined))
    return this.#running
  }

  async #check(): Promise<void> {
    try {
      const now = await readVersions(this.#db)
      const seen = this.#seen
      if (seen === undefined || now.access !== seen.access) this.#keys.invalidate()
      if (seen === undefined || now.catalog !== seen.catalog || now.catalog !== this.#catalog.current.version) {
        await this.#catalog.reload()
        this.#log.info({ catalogVersion: this.#catalog.current.version }, 'catalog reloaded')
      }
      this.#seen = now
      if (this.#failing) this.#log.info('storage reachable again; change polling resumed')
      this.#failing = false
    } catch (error) {
      if (!this.#failing) this.#log.warn({ err: error }, 'change polling failed; serving the state already loaded')
      this.#failing = true
    }
  }

  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer)
    this.#timer = undefined
  }
}
