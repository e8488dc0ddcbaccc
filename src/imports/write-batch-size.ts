/**
 * How many rows an import writes per transaction on SQLite, where a write transaction holds the
 * database's only write lock and every request that writes (each student request records a
 * disclosure) waits for it: its answer is that much later, and after 2 s it is 503.
 *
 * A fixed row count held the lock briefly on a quiet machine, but each row now also writes
 * change-log and webhook rows, and on a loaded machine the same batch held it many times longer. So the
 * size follows the time: after each batch it is scaled towards TARGET_MS from the time that batch
 * held the lock, growing at most twofold per batch (one quick batch proves little) and shrinking
 * at once.
 */
export const TARGET_MS = 20
export const MIN_ROWS = 50
export const MAX_ROWS = 5000
const FIRST_ROWS = 500

/** Bounds of a batch in units of other work than an import's rows (an erasure's students). */
export interface BatchBounds {
  first: number
  min: number
  max: number
}

export class WriteBatchSize {
  readonly #bounds: BatchBounds
  #rows: number

  constructor(bounds: BatchBounds = { first: FIRST_ROWS, min: MIN_ROWS, max: MAX_ROWS }) {
    this.#bounds = bounds
    this.#rows = bounds.first
  }

  /** Rows for the next transaction. */
  get rows(): number {
    return this.#rows
  }

  /** The last transaction wrote `rows` and held the lock `heldMs`. */
  record(rows: number, heldMs: number): void {
    const { min, max } = this.#bounds
    const fitting = heldMs > 0 ? (rows * TARGET_MS) / heldMs : max
    this.#rows = Math.round(Math.min(max, Math.max(min, Math.min(fitting, this.#rows * 2))))
  }
}

/**
 * After each batch on SQLite a writer waits as long as the batch held the lock (at least
 * MIN_PAUSE_MS). A waiting writer polls the lock on a back-off (1, 2, 5, 10, 15, 20, 25 ms
 * ...; sqliteDefaultBusyCallback in SQLite's main.c), so a pause as long as the wait so far
 * is certain to contain one of its polls; without a pause the batches would take the lock back
 * within microseconds and the waiter would never see it free.
 */
export const MIN_PAUSE_MS = 5

export function pauseAfterBatch(heldMs: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(MIN_PAUSE_MS, heldMs)))
}
