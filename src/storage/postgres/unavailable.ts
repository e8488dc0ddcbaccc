/**
 * The errors of PostgreSQL and its driver that mean "storage cannot serve right now" rather than
 * a bug (connection.ts, `isStorageUnavailable`).
 */
const NODE_UNAVAILABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH'])
/** node-postgres errors that carry no code, known by their message. */
const DRIVER_UNAVAILABLE = new RegExp(
  [
    'timeout exceeded when trying to connect',
    'Connection terminated',
    'Query read timeout',
    'Client has encountered a connection error',
  ].join('|'),
  'i',
)

export function isPostgresUnavailable(error: Error): boolean {
  const code = (error as { code?: unknown }).code
  if (typeof code === 'string') {
    if (NODE_UNAVAILABLE.has(code)) return true
    // PostgreSQL: 08 connection exception, 53 insufficient resources (53100 disk full), 57
    // operator intervention (admin shutdown, statement timeout), 58 system error (I/O), 25006
    // read-only transaction (a standby, or default_transaction_read_only during maintenance),
    // 40001/40P01 serialization failure and deadlock.
    if (/^(08|53|57|58)/.test(code) || code === '25006' || code === '40001' || code === '40P01') return true
  }
  return DRIVER_UNAVAILABLE.test(error.message)
}
