/**
 * The batches a roster import reads and writes its students in (roster-run.ts): each in the
 * caller's transaction, or, importing in batches, each a transaction of its own followed by a
 * pause, with its size following the time the last one held SQLite's write lock, as the student
 * importer's batches do (imports/write-batch-size.ts).
 */
import type { Kysely } from 'kysely'
import { ROSTER_CHUNK } from '../storage/roster-repository.js'
import type { Database } from '../storage/tables.js'

/** The least pause between two batches: a writer polling for the lock must find it free. */
const MIN_PAUSE_MS = 5
/** How long a batch should hold SQLite's write lock; the next batch's size follows. */
const TARGET_MS = 20
const FIRST_BATCH = 200
const MIN_BATCH = 25

export class RosterBatches {
  #current: Kysely<Database>
  /** Students in the next batch, when each batch commits on its own. */
  #rows = FIRST_BATCH

  /** With `own`, each batch is a transaction of its own on `root`; otherwise `root` is the caller's. */
  constructor(
    readonly root: Kysely<Database>,
    readonly own: boolean,
    readonly pause: (() => Promise<void>) | undefined,
  ) {
    this.#current = root
  }

  /** Where the current batch reads and writes. */
  get db(): Kysely<Database> {
    return this.#current
  }

  /** `items` a batch at a time: ROSTER_CHUNK, or the current size when batches commit on their own. */
  *slices<T>(items: readonly T[]): Generator<T[]> {
    for (let from = 0; from < items.length; ) {
      const size = this.own ? this.#rows : ROSTER_CHUNK
      yield items.slice(from, from + size)
      from += size
    }
  }

  /**
   * One batch: in its own transaction, then a pause as long as it held the write lock (at least
   * MIN_PAUSE_MS) so that other writers get the lock between batches; or in the caller's
   * transaction, then `pause`.
   */
  async unit(work: () => Promise<void>): Promise<void> {
    if (!this.own) {
      await work()
      await this.pause?.()
      return
    }
    const started = performance.now()
    await this.root.transaction().execute(async (trx) => {
      this.#current = trx
      try {
        await work()
      } finally {
        this.#current = this.root
      }
    })
    const held = performance.now() - started
    const fitting = held > 0 ? (this.#rows * TARGET_MS) / held : ROSTER_CHUNK
    this.#rows = Math.round(Math.min(ROSTER_CHUNK, Math.max(MIN_BATCH, Math.min(fitting, this.#rows * 2))))
    await new Promise((resolve) => setTimeout(resolve, Math.max(MIN_PAUSE_MS, held)))
  }
}
