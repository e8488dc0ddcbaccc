/**
 * Empties the write-ahead log file after an erasure. The checkpoints the server runs start the
 * WAL again from its beginning but keep the file (checkpointer.ts), so page images written before
 * an erasure, a child's first name in them, could stay in its later frames until overwritten; a
 * TRUNCATE checkpoint copies what is left and cuts the file to nothing.
 */
import type SQLite from 'better-sqlite3'

/** How long the truncation is tried while the server's readers or writers are in the way. */
const TRY_FOR_MS = 250
const PAUSE_MS = 2

/**
 * A PASSIVE checkpoint first, which waits for nobody and leaves little to copy, then TRUNCATE
 * without a busy handler, tried again every few milliseconds: the server's writers wait only
 * while one try holds the lock, never for a sleeping busy handler. `busy` when it never got
 * through.
 */
export async function truncateWal(database: SQLite.Database): Promise<'truncated' | 'busy'> {
  if (database.inTransaction) return 'busy'
  const busyTimeout = Number(database.pragma('busy_timeout', { simple: true }))
  database.pragma('busy_timeout = 0')
  try {
    const deadline = performance.now() + TRY_FOR_MS
    for (;;) {
      try {
        database.pragma('wal_checkpoint(PASSIVE)')
        const [result] = database.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[]
        if (result?.busy === 0) return 'truncated'
      } catch {
        // Busy: tried again below.
      }
      if (performance.now() > deadline) return 'busy'
      await new Promise((resolve) => setTimeout(resolve, PAUSE_MS))
    }
  } finally {
    database.pragma(`busy_timeout = ${busyTimeout}`)
  }
}
