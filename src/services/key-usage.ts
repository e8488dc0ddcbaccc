/**
 * Per-key bookkeeping kept off the request path: when each key was last used, and how many
 * requests it made per UTC day (and how many were refused with 429).
 *
 * Counted in memory; written in small batches that yield to requests in between, because with
 * SQLite every write runs on the event loop: 50,000 busy keys written at once would stall every
 * request for a second or more. "Last used" is written at most once per key per
 * LAST_USED_PRECISION_MS, which is the precision the dashboard shows.
 */
import { setImmediate as yieldToRequests } from 'node:timers/promises'
import type { Kysely } from 'kysely'
import type { Clock } from '../clock.js'
import { touchKeys } from '../storage/access-repository.js'
import type { Database } from '../storage/tables.js'
import { addUsage, type DailyCount } from '../storage/usage-repository.js'

export const LAST_USED_PRECISION_MS = 5 * 60_000
const BATCH = 250
const DAY_MS = 86_400_000

export class KeyUsage {
  readonly #db: Kysely<Database>
  readonly #clock: Clock
  /** key id -> when it was last used, for keys whose stored time is older than the precision. */
  #lastUsed = new Map<string, number>()
  /** key id -> the last-used time written to storage. */
  readonly #written = new Map<string, number>()
  /** key id -> today's counts not yet written. */
  #counts = new Map<string, DailyCount>()
  /** Counts of earlier days, or of a failed flush, waiting to be written. */
  #pending: DailyCount[] = []
  #day = ''
  #dayEnds = 0
  #flushing: Promise<void> | undefined

  constructor(db: Kysely<Database>, clock: Clock) {
    this.#db = db
    this.#clock = clock
  }

  /** One authenticated request by the key; `throttled` when it was refused with 429. */
  count(keyId: string, throttled: boolean): void {
    const now = this.#clock.now()
    if (now >= this.#dayEnds) this.#newDay(now)
    const written = this.#written.get(keyId)
    if (written === undefined || now - written >= LAST_USED_PRECISION_MS) this.#lastUsed.set(keyId, now)
    let entry = this.#counts.get(keyId)
    if (entry === undefined) {
      entry = { keyId, day: this.#day, requests: 0, throttled: 0 }
      this.#counts.set(keyId, entry)
    }
    entry.requests++
    if (throttled) entry.throttled++
  }

  /** Counts belong to the day they happened: a new day starts new entries, the old ones wait for the flush. */
  #newDay(now: number): void {
    const day = new Date(now).toISOString().slice(0, 10)
    if (this.#day !== '' && day !== this.#day) this.#pending.push(...this.#counts.values())
    this.#counts = new Map()
    this.#day = day
    this.#dayEnds = Math.floor(now / DAY_MS) * DAY_MS + DAY_MS
  }

  /** Writes what has accumulated; concurrent calls share one flush. */
  flush(): Promise<void> {
    this.#flushing ??= this.#flush().finally(() => (this.#flushing = undefined))
    return this.#flushing
  }

  async #flush(): Promise<void> {
    const lastUsed = [...this.#lastUsed]
    const counts = [...this.#pending, ...this.#counts.values()]
    this.#lastUsed = new Map()
    this.#counts = new Map()
    this.#pending = []
    try {
      while (lastUsed.length > 0) {
        const batch = lastUsed.slice(0, BATCH)
        await touchKeys(this.#db, new Map(batch))
        lastUsed.splice(0, batch.length)
        for (const [keyId, at] of batch) this.#written.set(keyId, at)
        await yieldToRequests()
      }
      while (counts.length > 0) {
        const batch = counts.slice(0, BATCH)
        await addUsage(this.#db, batch)
        counts.splice(0, batch.length)
        await yieldToRequests()
      }
    } catch (error) {
      // What was not written waits for the next flush, beside what arrived meanwhile.
      for (const [keyId, at] of lastUsed) if (!this.#lastUsed.has(keyId)) this.#lastUsed.set(keyId, at)
      this.#pending.push(...counts)
      throw error
    }
  }
}
