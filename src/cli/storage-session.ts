/**
 * Opens the database the server uses (same DATABASE_URL, same configuration rules), brings
 * its schema up to date so every command works on a fresh database, and always closes it.
 */
import { loadConfig, type Config } from '../config.js'
import type { Storage } from '../storage/connection.js'
import type { MigrationReport } from '../storage/migrate.js'

/**
 * An operator command may wait for a running server's write to finish; 10 s is long enough to
 * ride out a busy moment and short enough to fail visibly when something holds the lock.
 */
const BUSY_TIMEOUT_MS = 10_000
/** PostgreSQL statement timeout: an import writes 500-row batches, far below this. */
const STATEMENT_TIMEOUT_MS = 60_000

/**
 * Page cache for the CLI's SQLite connection, in KiB. Imports write in key order, so the pages
 * they touch are neighbours and a modest cache suffices, and an import's memory stays bounded
 * whatever the file's size (docs/performance.md, "Import memory").
 */
const IMPORT_CACHE_KIB = 8 * 1024
/** Cache of the temporary database, where imports stage their rows (and sort them to index them). */
const STAGING_CACHE_KIB = 4 * 1024

export interface Session {
  storage: Storage
  config: Config
  migrated: MigrationReport
}

/**
 * `migrate: false` leaves the schema as it is, for the commands that must see it unchanged
 * (`migrate --dry-run`, `backup`); `migrated` then lists nothing.
 */
export async function withStorage<T>(
  work: (session: Session) => Promise<T>,
  options: { migrate?: boolean } = {},
): Promise<T> {
  const config = loadConfig()
  // Loaded here rather than at start: see program.ts.
  const [{ openStorage }, { migrate }] = await Promise.all([
    import('../storage/connection.js'),
    import('../storage/migrate.js'),
  ])
  const storage = openStorage(config.databaseUrl, {
    busyTimeoutMs: BUSY_TIMEOUT_MS,
    synchronous: config.sqliteSynchronous,
    timeoutMs: STATEMENT_TIMEOUT_MS,
    poolSize: 2,
    // SQLite's default page cache is 2 MB; a large import rereads index pages with it. The
    // connection is the CLI's own, so the server's memory use is unaffected.
    pageCacheKib: IMPORT_CACHE_KIB,
    tempCacheKib: STAGING_CACHE_KIB,
  })
  try {
    const migrated =
      options.migrate === false
        ? { applied: [] }
        : await migrate(storage, undefined, { agreementDispositionDays: config.agreementDispositionDays })
    return await work({ storage, config, migrated })
  } finally {
    await storage.close()
  }
}
