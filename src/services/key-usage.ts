/**
 * Per-key bookkeeping kept off the request path: when each key was last used, and how many
 * requests it made per UTC day (and how many were refused with 429). Counted in memory, written
 * in batches; precision of "last used" is the flush interval.
 */
import type { Kysely } from 'kysely'
import type { Clock } from '../clock.js'
import { touchKeys } from '../storage/access-repository.js'
import type { Database } from '../storage/database.js'
import { addUsage, type DailyCount } from '../storage/usage-repository.js'

export class KeyUsage {
  readonly #db: Kysely<Database>
  readonly #clock: Clock
  #lastUsed = new Map<string, number>()
  /** key id + day -> counts */
  #counts = new Map<string, DailyCount>()

  constructor(db: Kysely<Database>, clock: Clock) {
    this.#db = db
    this.#clock = clock
  }

  /** One authenticated request by the key; `throttled` when it was refused with 429. */
  count(keyId: string, throttled: boolean): void {
    const now = this.#clock.now()
    this.#lastUsed.set(keyId, now)
    const day = new Date(now).toISOString().slice(0, 10)
    const id = `${keyId} ${day}`
    let entry = this.#counts.get(id)
    if (entry === undefined) {
      entry = { keyId, day, requests: 0, throttled: 0 }
      this.#counts.set(id, entry)
    }
    entry.requests++
    if (throttled) entry.throttled++
  }

  async flush(): Promise<void> {
    if (this.#lastUsed.size === 0 && this.#counts.size === 0) return
    const lastUsed = this.#lastUsed
    const counts = this.#counts
    this.#lastUsed = new Map()
    this.#counts = new Map()
    try {
      await touchKeys(this.#db, lastUsed)
      await addUsage(this.#db, [...counts.values()])
    } catch (error) {
      // Put the batch back for the next flush, merged with what arrived meanwhile.
      for (const [keyId, at] of lastUsed) if (!this.#lastUsed.has(keyId)) this.#lastUsed.set(keyId, at)
      for (const [id, entry] of counts) {
        const newer = this.#counts.get(id)
        if (newer === undefined) this.#counts.set(id, entry)
        else {
          newer.requests += entry.requests
          newer.throttled += entry.throttled
        }
      }
      throw error
    }
  }
}
