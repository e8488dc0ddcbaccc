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

export class WriteBatchSize {
  #rows = FIRST_ROWS

  /** Rows for the next transaction. */
  get rows(): number {
    return this.#rows
  }

  /** The last transaction wrote `rows` and held the lock `heldMs`. */
  record(rows: number, heldMs: number): void {
    const fitting = heldMs > 0 ? (rows * TARGET_MS) / heldMs : MAX_ROWS
    this.#rows = Math.round(Math.min(MAX_ROWS, Math.max(MIN_ROWS, Math.min(fitting, this.#rows * 2))))
  }
}
