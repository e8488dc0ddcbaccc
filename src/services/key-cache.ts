/**
 * Resolves key hashes to key records, remembering answers (including "no such key") so the
 * hot path rarely touches storage. The cache is emptied whenever the access version changes
 * (a key created, revoked or expired early, an agreement recorded or ended), which every
 * instance notices within one poll interval. Entries older than `maxAgeMs` are re-read; if
 * storage is down at that moment the old answer keeps serving, so known keys ride out outages.
 */
import type { Kysely } from 'kysely'
import { findKeyByHash, type KeyRecord } from '../storage/access-repository.js'
import type { Database } from '../storage/database.js'
import type { Clock } from '../clock.js'

interface Entry {
  record: KeyRecord | null
  loadedAt: number
}

/**
 * The parts of a key record that many keys have in common (the organisation id, the scope set,
 * the organisation's agreements), kept once. With tens of thousands of keys cached this is
 * most of the cache's memory.
 */
class SharedParts {
  readonly #parts = new Map<string, unknown>()

  #share<T>(key: string, value: T): T {
    const known = this.#parts.get(key)
    if (known !== undefined) return known as T
    this.#parts.set(key, value)
    return value
  }

  record(record: KeyRecord): KeyRecord {
    const organisationId = this.#share(`o ${record.organisationId}`, record.organisationId)
    const agreements = record.agreements.map((window) => `${window.from}-${window.until}`).join(',')
    return {
      ...record,
      organisationId,
      scopes: this.#share(`s ${[...record.scopes].join(' ')}`, record.scopes),
      agreements: this.#share(`a ${organisationId} ${agreements}`, record.agreements),
    }
  }
}

export class KeyCache {
  readonly #db: Kysely<Database>
  readonly #clock: Clock
  readonly #maxEntries: number
  readonly #maxAgeMs: number
  #entries = new Map<string, Entry>()
  readonly #loading = new Map<string, Promise<KeyRecord | null>>()
  #generation = 0
  #shared = new SharedParts()

  constructor(options: { db: Kysely<Database>; clock: Clock; maxEntries?: number; maxAgeMs?: number }) {
    this.#db = options.db
    this.#clock = options.clock
    this.#maxEntries = options.maxEntries ?? 50_000
    // Changes arrive through the access version; this re-read is only a safety net.
    this.#maxAgeMs = options.maxAgeMs ?? 15 * 60_000
  }

  /**
   * The cached answer for a hash (a record, or null for "no such key"), or undefined when only
   * storage can tell; never starts a lookup.
   */
  cached(hash: string): KeyRecord | null | undefined {
    const entry = this.#entries.get(hash)
    if (entry !== undefined && this.#clock.now() - entry.loadedAt < this.#maxAgeMs) return entry.record
    return undefined
  }

  /** The key record for a hash, or null if no key has it. */
  lookup(hash: string): KeyRecord | null | Promise<KeyRecord | null> {
    const entry = this.#entries.get(hash)
    if (entry !== undefined && this.#clock.now() - entry.loadedAt < this.#maxAgeMs) return entry.record
    return this.#load(hash, entry)
  }

  #load(hash: string, stale: Entry | undefined): Promise<KeyRecord | null> {
    const pending = this.#loading.get(hash)
    if (pending !== undefined) return pending
    const generation = this.#generation
    const promise = findKeyByHash(this.#db, hash)
      .then((record) => {
        const value = record === undefined ? null : this.#shared.record(record)
        // A load that raced with an invalidation must not put the old answer back.
        if (generation === this.#generation) this.#remember(hash, value)
        return value
      })
      .catch((error: unknown) => {
        if (stale !== undefined) return stale.record
        throw error
      })
      .finally(() => this.#loading.delete(hash))
    this.#loading.set(hash, promise)
    return promise
  }

  #remember(hash: string, record: KeyRecord | null): void {
    if (this.#entries.size >= this.#maxEntries) {
      // Drop the oldest insertion; Map iteration follows insertion order.
      const oldest = this.#entries.keys().next()
      if (oldest.done !== true) this.#entries.delete(oldest.value)
    }
    this.#entries.delete(hash)
    this.#entries.set(hash, { record, loadedAt: this.#clock.now() })
  }

  invalidate(): void {
    this.#generation++
    this.#entries = new Map()
    this.#shared = new SharedParts()
  }

  get size(): number {
    return this.#entries.size
  }
}
