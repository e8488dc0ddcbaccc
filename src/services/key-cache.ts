/**
 * Resolves key hashes to key records so the hot path rarely touches storage.
 *
 * Known keys live in a bounded cache and leave it only when a change concerns them: the change
 * watcher reads the access change log and evicts one key (a revocation) or one organisation's
 * keys (a suspension, an agreement change). Creating a key evicts nothing; the new key is a
 * cache miss. Expiry needs no eviction: the record carries `expiresAt` and `usableKey` in
 * access-control.ts compares it with the clock on every request.
 *
 * Unknown hashes go to a separate, smaller cache with a lifetime of their own, so a flood of
 * random well-formed keys cannot push real keys out (each would otherwise take a slot of the
 * key cache).
 *
 * Entries older than `maxAgeMs` are re-read in the background while the old record keeps
 * serving: the re-read is only a safety net (for a row edited by hand), and answering from the
 * record meanwhile means a database outage never turns known keys into 503s. A revocation
 * still wins, because its eviction does not wait for the re-read.
 *
 * With tens of thousands of keys this is most of the process's own memory, so each known key
 * has a slot: its record, hash and load time sit in arrays indexed by slot, an organisation's
 * keys are chained through the slots (for eviction), and the record shares its organisation
 * with the organisation's other keys. Per key that leaves one map entry, the record and the
 * two id strings (revocations, which are rare, look for the key id among the slots).
 */
import type { Kysely } from 'kysely'
import type { Clock } from '../clock.js'
import type { KeyRecord } from '../domain/api-key.js'
import { findKeyByHash } from '../storage/access-repository.js'
import type { Database } from '../storage/tables.js'
import { SharedOrganisations } from './shared-organisations.js'

/** After a failed background re-read, wait this long before trying that key again. */
const RETRY_MS = 5_000
const NO_SLOT = -1

export interface KeyCacheOptions {
  db: Kysely<Database>
  clock: Clock
  /** Known keys kept; 50,000 by default. */
  maxEntries?: number
  /** Age after which a known key is re-read in the background; 15 minutes by default. */
  maxAgeMs?: number
  /** Unknown hashes kept; 10,000 by default. */
  maxUnknown?: number
  /** How long "no such key" is believed; 60 s by default. */
  unknownTtlMs?: number
}

export class KeyCache {
  readonly #db: Kysely<Database>
  readonly #clock: Clock
  readonly #maxEntries: number
  readonly #maxAgeMs: number
  readonly #maxUnknown: number
  readonly #unknownTtlMs: number
  /** Hash -> slot, in insertion order (the oldest is dropped when full). */
  readonly #slotByHash = new Map<string, number>()
  /** Per slot: the record and hash (undefined while free), when it was read, and its organisation chain. */
  readonly #records: (KeyRecord | undefined)[] = []
  readonly #hashes: (string | undefined)[] = []
  #loadedAt = new Float64Array(1024)
  #nextOfOrganisation = new Int32Array(1024)
  #previousOfOrganisation = new Int32Array(1024)
  /** Organisation id -> the first slot of its chain. */
  readonly #firstOfOrganisation = new Map<string, number>()
  readonly #freeSlots: number[] = []
  /** Unknown hash -> time until which it is believed unknown. */
  readonly #unknown = new Map<string, number>()
  readonly #loading = new Map<string, Promise<KeyRecord | null>>()
  #generation = 0
  readonly #organisations = new SharedOrganisations()
  #storageLookups = 0
  #hits = 0

  constructor(options: KeyCacheOptions) {
    this.#db = options.db
    this.#clock = options.clock
    this.#maxEntries = options.maxEntries ?? 50_000
    this.#maxAgeMs = options.maxAgeMs ?? 15 * 60_000
    this.#maxUnknown = options.maxUnknown ?? 10_000
    // A hash goes from unknown to known only when a key with that very secret is created, and
    // secrets are random: no key created later was asked for before. So the lifetime only
    // bounds how often a client repeating a wrong key costs a storage lookup, and a minute
    // keeps those lookups rare (docs/performance.md).
    this.#unknownTtlMs = options.unknownTtlMs ?? 60_000
  }

  /**
   * The answer the cache holds for a hash (a record, or null for "no such key"), or undefined
   * when only storage can tell; never waits for storage (a stale record is served while it is
   * re-read in the background, as `lookup` does).
   */
  cached(hash: string, now = this.#clock.now()): KeyRecord | null | undefined {
    const slot = this.#slotByHash.get(hash)
    if (slot !== undefined) {
      if (now - this.#loadedAt[slot]! >= this.#maxAgeMs) this.#refresh(hash, slot, now)
      this.#hits++
      return this.#records[slot]!
    }
    const unknownUntil = this.#unknown.get(hash)
    if (unknownUntil === undefined) return undefined
    if (now < unknownUntil) {
      this.#hits++
      return null
    }
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

  #refresh(hash: string, slot: number, now: number): void {
    if (this.#loading.has(hash)) return
    this.#load(hash).catch(() => {
      // Storage is down: keep serving the record, and do not ask again for every request
      // (unless the slot has gone to another key meanwhile).
      if (this.#hashes[slot] === hash) this.#loadedAt[slot] = now - this.#maxAgeMs + RETRY_MS
    })
  }

  #load(hash: string): Promise<KeyRecord | null> {
    const pending = this.#loading.get(hash)
    if (pending !== undefined) return pending
    const generation = this.#generation
    this.#storageLookups++
    const promise: Promise<KeyRecord | null> = findKeyByHash(this.#db, hash)
      .then((found) => {
        const record = found === undefined ? null : this.#shared(found)
        // A load that raced with an eviction must not put the old answer back.
        if (generation === this.#generation) this.#remember(hash, record)
        return record
      })
      .finally(() => {
        if (this.#loading.get(hash) === promise) this.#loading.delete(hash)
      })
    this.#loading.set(hash, promise)
    // Every caller that waits for it still gets the error; a load nobody waits for any more (its
    // request gone, its storage closed) must not end the process with an unhandled rejection.
    promise.catch(() => {})
    return promise
  }

  /** The record with its organisation replaced by the one its organisation's other keys share. */
  #shared(record: KeyRecord): KeyRecord {
    const organisation = this.#organisations.share(record.organisation)
    if (organisation === record.organisation) return record
    return {
      keyId: record.keyId,
      organisation,
      sandbox: record.sandbox,
      scopes: record.scopes,
      expiresAt: record.expiresAt,
      revokedAt: record.revokedAt,
      rolledAt: record.rolledAt,
    }
  }

  #remember(hash: string, record: KeyRecord | null): void {
    const now = this.#clock.now()
    this.#drop(hash)
    if (record === null) {
      this.#unknown.delete(hash)
      if (this.#unknown.size >= this.#maxUnknown) this.#unknown.delete(this.#unknown.keys().next().value!)
      this.#unknown.set(hash, now + this.#unknownTtlMs)
      return
    }
    this.#unknown.delete(hash)
    // Drop the oldest insertion; Map iteration follows insertion order.
    if (this.#slotByHash.size >= this.#maxEntries) this.#drop(this.#slotByHash.keys().next().value!)
    const slot = this.#freeSlots.pop() ?? this.#newSlot()
    this.#records[slot] = record
    this.#hashes[slot] = hash
    this.#loadedAt[slot] = now
    this.#slotByHash.set(hash, slot)
    const organisationId = record.organisation.id
    const first = this.#firstOfOrganisation.get(organisationId) ?? NO_SLOT
    this.#previousOfOrganisation[slot] = NO_SLOT
    this.#nextOfOrganisation[slot] = first
    if (first !== NO_SLOT) this.#previousOfOrganisation[first] = slot
    this.#firstOfOrganisation.set(organisationId, slot)
  }

  #newSlot(): number {
    const slot = this.#records.length
    this.#records.push(undefined)
    this.#hashes.push(undefined)
    if (slot === this.#loadedAt.length) {
      const grow = <T extends Float64Array | Int32Array>(from: T, to: T): T => {
        to.set(from as ArrayLike<number>)
        return to
      }
      this.#loadedAt = grow(this.#loadedAt, new Float64Array(slot * 2))
      this.#nextOfOrganisation = grow(this.#nextOfOrganisation, new Int32Array(slot * 2))
      this.#previousOfOrganisation = grow(this.#previousOfOrganisation, new Int32Array(slot * 2))
    }
    return slot
  }

  #drop(hash: string): void {
    const slot = this.#slotByHash.get(hash)
    if (slot === undefined) return
    const record = this.#records[slot]!
    this.#slotByHash.delete(hash)
    const previous = this.#previousOfOrganisation[slot]!
    const next = this.#nextOfOrganisation[slot]!
    if (next !== NO_SLOT) this.#previousOfOrganisation[next] = previous
    if (previous !== NO_SLOT) this.#nextOfOrganisation[previous] = next
    else if (next !== NO_SLOT) this.#firstOfOrganisation.set(record.organisation.id, next)
    else this.#firstOfOrganisation.delete(record.organisation.id)
    this.#records[slot] = undefined
    this.#hashes[slot] = undefined
    this.#freeSlots.push(slot)
  }

  /** Loads under way may carry answers read before the change: none of them may be stored. */
  #changed(): void {
    this.#generation++
    this.#loading.clear()
  }

  /** Forgets one key (it was revoked); the next request for it reads storage. */
  evictKey(keyId: string): void {
    this.evictKeys([keyId])
  }

  /** Forgets the keys (revoked); one pass over the slots however many there are. */
  evictKeys(keyIds: Iterable<string>): void {
    this.#changed()
    const revoked = new Set(keyIds)
    const hashes: string[] = []
    for (let slot = 0; slot < this.#records.length; slot++) {
      const record = this.#records[slot]
      if (record !== undefined && revoked.has(record.keyId)) hashes.push(this.#hashes[slot]!)
    }
    for (const hash of hashes) this.#drop(hash)
  }

  /** Forgets every key of an organisation (suspended, reinstated, agreements changed). */
  evictOrganisation(organisationId: string): void {
    this.#changed()
    const hashes: string[] = []
    let slot = this.#firstOfOrganisation.get(organisationId) ?? NO_SLOT
    for (; slot !== NO_SLOT; slot = this.#nextOfOrganisation[slot]!) hashes.push(this.#hashes[slot]!)
    for (const hash of hashes) this.#drop(hash)
    this.#organisations.forget(organisationId)
  }

  /** Forgets everything; only for changes the log cannot name (see ChangeWatcher). */
  clear(): void {
    this.#changed()
    for (const hash of [...this.#slotByHash.keys()]) this.#drop(hash)
    this.#unknown.clear()
    this.#organisations.clear()
  }

  /** Known keys cached. */
  get size(): number {
    return this.#slotByHash.size
  }

  /** Unknown hashes cached. */
  get unknownSize(): number {
    return this.#unknown.size
  }

  /** Answers given from the cache so far (a known key, or a hash known to be no key). */
  get hits(): number {
    return this.#hits
  }

  /** Storage reads made so far; tests use it to tell a cache hit from a miss. */
  get storageLookups(): number {
    return this.#storageLookups
  }
}
