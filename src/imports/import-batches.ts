/**
 * The batches an import writes in, the one policy for every format: each batch in the caller's
 * transaction, or each a transaction of its own. A batch of its own on SQLite is sized by how long
 * the last one held the write lock and followed by a pause (write-batch-size.ts), so that the
 * service's own writes get the lock between batches.
 */
import type { Kysely } from 'kysely'
import type { Database } from '../storage/tables.js'
import { pauseAfterBatch, type WriteBatchSize } from './write-batch-size.js'

export class ImportBatches {
  #current: Kysely<Database>

  /**
   * With `own`, each batch is a transaction of its own on `root`, sized and paused after by
   * `size` when given; otherwise `root` is the caller's transaction and `pause` follows each batch.
   */
  constructor(
    readonly root: Kysely<Database>,
    readonly own: boolean,
    readonly size: WriteBatchSize | undefined,
    readonly pause?: () => Promise<void>,
  ) {
    this.#current = root
  }

  /** Where the current batch reads and writes. */
  get db(): Kysely<Database> {
    return this.#current
  }

  /**
   * One batch: in its own transaction, then sized and paused after by the time it held the lock
   * (`rows` written, by default the size it was given); or in the caller's transaction, then `pause`.
   */
  async unit<T>(work: (db: Kysely<Database>) => Promise<T>, rows?: number): Promise<T> {
    if (!this.own) {
      const result = await work(this.root)
      await this.pause?.()
      return result
    }
    const started = performance.now()
    const result = await this.root.transaction().execute(async (trx) => {
      this.#current = trx
      try {
        return await work(trx)
      } finally {
        this.#current = this.root
      }
    })
    if (this.size !== undefined) {
      const held = performance.now() - started
      this.size.record(rows ?? this.size.rows, held)
      await pauseAfterBatch(held)
    }
    return result
  }
}
