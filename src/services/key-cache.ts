/**
 * Resolves key hashes to key records so the hot path rarely touches storage.
 *
 * Known keys live in a bounded cache and leave it only when a change concerns them: the change
 * watcher reads the access change log and evicts one key (a revocation) or one organisation's
 * keys (a suspension, an agreement change). Creating a key evicts nothing; the new key is a
 * cache miss. Expiry needs no eviction: the record carries `expiresAt` and `usableKey` in
 * access-control.ts compares it with the clock on every request.
 *
 * Unknown hashes go to a separate, smaller cache with a short lifetime, so a flood of random
 * well-formed keys cannot push real keys out (each would otherwise take a slot of the key cache).
 *
 * Entries older than `maxAgeMs` are re-read in the background while the old record keeps
 * serving: the re-read is only a safety net (for a row edited by hand), and answering from the
 * record meanwhile means a database outage never turns known keys into 503s. A revocation
 * still wins, because its eviction does not wait for the re-read.
 */
import type { Kysely } from 'kysely'
import type { KeyRecord } from '../domain/api-key.js'
import { findKeyByHash } from '../storage/access-repository.js'
import type { Database } from '../storage/tables.js'
import type { Clock } from '../clock.js'

interface Entry {
  readonly record: KeyRecord
  loadedAt: number
}

/** After a failed background re-read, wait this long before trying that key again. */
const RETRY_MS = 5_000

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

  /** Forgets an organisation's agreements, which have changed (the old ones would pile up). */
  forget(organisationId: string): void {
    for (const key of this.#parts.keys()) if (key.startsWith(`a ${organisationId} `)) this.#parts.delete(key)
  }
}

export interface KeyCacheOptions {
  db: Kysely<Database>
  clock: Clock
  /** Known keys kept; 50,000 by default. */
  maxEntries?: number
  /** Age after which a known key is re-read in the background; 15 minutes by default. */
  maxAgeMs?: number
  /** Unknown hashes kept; 10,000 by default. */
  maxUnknown?: number
  /** How long "no such key" is believed; 5 s by default, the bound changes have to propagate. */
  unknownTtlMs?: number
}

export class KeyCache {
  readonly #db: Kysely<Database>
  readonly #clock: Clock
  readonly #maxEntries: number
  readonly #maxAgeMs: number
  readonly #maxUnknown: number
  readonly #unknownTtlMs: number
  readonly #entries = new Map<string, Entry>()
  /** Hash by key id and hashes by organisation id, to evict what a change names. */
  readonly #hashByKey = new Map<string, string>()
  readonly #hashesByOrganisation = new Map<string, Set<string>>()
  /** Unknown hash -> time until which it is believed unknown. */
  readonly #unknown = new Map<string, number>()
  readonly #loading = new Map<string, Promise<KeyRecord | null>>()
  #generation = 0
  #shared = new SharedParts()
  #storageLookups = 0

  constructor(options: KeyCacheOptions) {
    this.#db = options.db
    this.#clock = options.clock
    this.#maxEntries = options.maxEntries ?? 50_000
    this.#maxAgeMs = options.maxAgeMs ?? 15 * 60_000
    this.#maxUnknown = options.maxUnknown ?? 10_000
    // A new key's hash cannot have been asked for before (its secret is random), so this only
    // needs to be short enough to keep the propagation promise even if it had.
    this.#unknownTtlMs = options.unknownTtlMs ?? 5_000
  }

  /**
   * The answer the cache holds for a hash (a record, or null for "no such key"), or undefined
   * when only storage can tell; never waits for storage (a stale record is served while it is
   * re-read in the background, as `lookup` does).
   */
  cached(hash: string): KeyRecord | null | undefined {
    const now = this.#clock.now()
    const entry = this.#entries.get(hash)
    if (entry !== undefined) {
      if (now - entry.loadedAt >= this.#maxAgeMs) this.#refresh(hash, entry, now)
      return entry.record
    }
    const unknownUntil = this.#unknown.get(hash)
    if (unknownUntil === undefined) return undefined
    if (now < unknownUntil) return null
    this.#unknown.delete(hash)
    return undefined
  }

  /**
   * The key record for a hash, or null if no key has it; a Promise only when storage must be asked.
   *
   * @example
   * const found = keys.lookup(hashApiKey(token))
   * const record = found instanceof Promise ? await found : found
   */
  lookup(hash: string): KeyRecord | null | Promise<KeyRecord | null> {
    const known = this.cached(hash)
    return known === undefined ? this.#load(hash) : known
  }

  #refresh(hash: string, entry: Entry, now: number): void {
    if (this.#loading.has(hash)) return
    this.#load(hash).catch(() => {
      // Storage is down: keep serving the record, and do not ask again for every request.
      entry.loadedAt = now - this.#maxAgeMs + RETRY_MS
    })
  }

  #load(hash: string): Promise<KeyRecord | null> {
    const pending = this.#loading.get(hash)
    if (pending !== undefined) return pending
    const generation = this.#generation
    this.#storageLookups++
    const promise: Promise<KeyRecord | null> = findKeyByHash(this.#db, hash)
      .then((found) => {
        const record = found === undefined ? null : this.#shared.record(found)
        // A load that raced with an eviction must not put the old answer back.
        if (generation === this.#generation) this.#remember(hash, record)
        return record
      })
      .finally(() => {
        if (this.#loading.get(hash) === promise) this.#loading.delete(hash)
      })
    this.#loading.set(hash, promise)
    return promise
  }

  #remember(hash: string, record: KeyRecord | null): void {
    const now = this.#clock.now()
    if (record === null) {
      this.#drop(hash)
      this.#unknown.delete(hash)
      if (this.#unknown.size >= this.#maxUnknown) this.#unknown.delete(this.#unknown.keys().next().value!)
      this.#unknown.set(hash, now + this.#unknownTtlMs)
      return
    }
    this.#unknown.delete(hash)
    this.#drop(hash)
    // Drop the oldest insertion; Map iteration follows insertion order.
    if (this.#entries.size >= this.#maxEntries) this.#drop(this.#entries.keys().next().value!)
    this.#entries.set(hash, { record, loadedAt: now })
    this.#hashByKey.set(record.keyId, hash)
    let hashes = this.#hashesByOrganisation.get(record.organisationId)
    if (hashes === undefined) this.#hashesByOrganisation.set(record.organisationId, (hashes = new Set()))
    hashes.add(hash)
  }

  #drop(hash: string): void {
    const entry = this.#entries.get(hash)
    if (entry === undefined) return
    this.#entries.delete(hash)
    this.#hashByKey.delete(entry.record.keyId)
    const hashes = this.#hashesByOrganisation.get(entry.record.organisationId)
    hashes?.delete(hash)
    if (hashes?.size === 0) this.#hashesByOrganisation.delete(entry.record.organisationId)
  }

  /** Loads under way may carry answers read before the change: none of them may be stored. */
  #changed(): void {
    this.#generation++
    this.#loading.clear()
  }

  /** Forgets one key (it was revoked); the next request for it reads storage. */
  evictKey(keyId: string): void {
    this.#changed()
    const hash = this.#hashByKey.get(keyId)
    if (hash !== undefined) this.#drop(hash)
  }

  /** Forgets every key of an organisation (suspended, reinstated, agreements changed). */
  evictOrganisation(organisationId: string): void {
    this.#changed()
    for (const hash of [...(this.#hashesByOrganisation.get(organisationId) ?? [])]) this.#drop(hash)
    this.#shared.forget(organisationId)
  }

  /** Forgets everything; only for changes the log cannot name (see ChangeWatcher). */
  clear(): void {
    this.#changed()
    this.#entries.clear()
    this.#hashByKey.clear()
    this.#hashesByOrganisation.clear()
    this.#unknown.clear()
    this.#shared = new SharedParts()
  }

  /** Known keys cached. */
  get size(): number {
    return this.#entries.size
  }

  /** Unknown hashes cached. */
  get unknownSize(): number {
    return this.#unknown.size
  }

  /** Storage reads made so far; tests use it to tell a cache hit from a miss. */
  get storageLookups(): number {
    return this.#storageLookups
  }
}
