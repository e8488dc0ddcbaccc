/**
 * The process: read configuration, open and migrate storage, seed the demo on an empty
 * database, listen, and close gracefully on SIGINT/SIGTERM (in-flight requests finish).
 */
import { buildApp } from './app.js'
import { systemClock } from './clock.js'
import { ConfigError, loadConfig } from './config.js'
import { demoBanner, seedDemoIfEmpty } from './demo/seed-demo.js'
import { createLogger } from './logger.js'
import { openStorage } from './storage/db.js'
import { migrate } from './storage/migrate.js'

/** Worst case the event loop waits on another process's SQLite write lock before answering 503. */
const SQLITE_BUSY_TIMEOUT_MS = 250

async function main(): Promise<void> {
  let config
  try {
    config = loadConfig()
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`configuration error: ${error.message}\n`)
      process.exit(78) // EX_CONFIG
    }
    throw error
  }
  const log = createLogger(config.logLevel)
  const storage = openStorage(config.databaseUrl, {
    busyTimeoutMs: SQLITE_BUSY_TIMEOUT_MS,
    synchronous: config.sqliteSynchronous,
    timeoutMs: config.storageTimeoutMs,
  })
  const migrated = await migrate(storage)
  if (migrated.applied.length > 0) log.info({ migrations: migrated.applied }, 'database migrated')

  if (config.seedDemo) {
    const seed = await seedDemoIfEmpty(storage.db, config.catalogDir, systemClock.now())
    if (seed !== undefined) process.stdout.write(`\n${demoBanner(seed, config.publicUrl)}\n\n`)
  }

  const app = await buildApp({ config, storage, logger: log })
  if (app.services.catalog.current.lessonTotal === 0) {
    log.warn('the catalog is empty; import one with: npx curriculum catalog import')
  }

  let closing = false
  const shutdown = (signal: string) => {
    if (closing) {
      log.warn({ signal }, 'second signal: exiting now')
      process.exit(1)
    }
    closing = true
    log.info({ signal }, 'closing: finishing in-flight requests')
    app
      .close()
      .then(() => storage.close())
      .then(() => process.exit(0))
      .catch((error: unknown) => {
        log.error({ err: error }, 'error while closing')
        process.exit(1)
      })
  }
  process.on('SIGINT', () => shutdown('SIGINT'))
  process.on('SIGTERM', () => shutdown('SIGTERM'))

  await app.listen({ port: config.port, host: config.host })
  log.info({ engine: storage.engine, reference: `${config.publicUrl}/docs` }, `API reference at ${config.publicUrl}/docs`)
}

main().catch((error: unknown) => {
  process.stderr.write(`failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exit(1)
})
