/**
 * Remembers when each key was last used and writes it in batches, so a request never waits
 * on a write for bookkeeping. Precision is the flush interval.
 */
import type { Kysely } from 'kysely'
import type { Clock } from '../clock.js'
import { touchKeys } from '../storage/access-repository.js'
import type { Database } from '../storage/database.js'

export class KeyUsage {
  readonly #db: Kysely<Database>
  readonly #clock: Clock
  #pending = new Map<string, number>()

  constructor(db: Kysely<Database>, clock: Clock) {
    this.#db = db
    this.#clock = clock
  }

  touch(keyId: string): void {
    this.#pending.set(keyId, this.#clock.now())
  }

  async flush(): Promise<void> {
    if (this.#pending.size === 0) return
    const batch = this.#pending
    this.#pending = new Map()
    try {
      await touchKeys(this.#db, batch)
    } catch (error) {
      // Keep the times for the next flush, unless newer ones arrived meanwhile.
      for (const [keyId, at] of batch) if (!this.#pending.has(keyId)) this.#pending.set(keyId, at)
      throw error
    }
  }
}
