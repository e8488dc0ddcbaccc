/**
 * SQLite's result codes (with their extended forms, SQLITE_BUSY_RECOVERY...) that mean "storage
 * cannot serve right now" rather than a bug: another connection has the lock, an I/O error, a
 * full or read-only disk (connection.ts, `isStorageUnavailable`).
 */
const SQLITE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|FULL|PROTOCOL|READONLY)/

export function isSqliteUnavailable(error: Error): boolean {
  const code = (error as { code?: unknown }).code
  return typeof code === 'string' && SQLITE_UNAVAILABLE.test(code)
}
