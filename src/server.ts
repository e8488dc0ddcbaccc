/**
 * The process: read configuration, open and migrate storage, seed the demo on an empty
 * database, listen, and close gracefully on SIGINT/SIGTERM (in-flight requests finish).
 * `node dist/server.js` runs it through server-entry.ts, which turns Node's compile cache on first.
 *
 * With WORKERS=n the primary process migrates and seeds once, then forks n workers that share
 * the listening socket (node:cluster) and replaces any worker that dies.
 */
import cluster from 'node:cluster'
import { type AppServices, buildApp } from './app.js'
import type { CompileCache } from './compile-cache.js'
import { systemClock } from './clock.js'
import { type Config, ConfigError, loadConfig } from './config.js'
import { API_PREFIX } from './http/api-prefix.js'
import { createLogger } from './logger.js'
import { installSpans, type Spans } from './instrumentation/spans.js'
import { databaseFilesOpenToOthers, openStorage, type Storage } from './storage/connection.js'
import { isEmptyDatabase } from './storage/meta-repository.js'
import { migrate, NewerDatabaseError } from './storage/migrate.js'
import { listenForScrapes, type Scrape } from './observability/metrics-route.js'

/**
 * Worst case the event loop waits on another process's SQLite write lock in a statement outside
 * a transaction; transactions wait for it without blocking, for up to 2 s (storage/sqlite/immediate-transactions.ts).
 */
const SQLITE_BUSY_TIMEOUT_MS = 250
/**
 * The serving connection's SQLite page cache, smaller than better-sqlite3's default, which the
 * first lookups of many keys fill with key pages that are read once; progress reads cost the
 * same with this one (the operating system caches the file as well).
 */
const SQLITE_PAGE_CACHE_KIB = 4000

function readConfig(): Config {
  try {
    return loadConfig()
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`configuration error: ${error.message}\n`)
      process.exit(78) // EX_CONFIG
    }
    throw error
  }
}

function open(config: Config, serving = false): Storage {
  return openStorage(config.databaseUrl, {
    busyTimeoutMs: SQLITE_BUSY_TIMEOUT_MS,
    backgroundCheckpoints: serving,
    ...(serving ? { pageCacheKib: SQLITE_PAGE_CACHE_KIB, mmapBytes: config.sqliteMmapMib * 1024 * 1024 } : {}),
    synchronous: config.sqliteSynchronous,
    timeoutMs: config.storageTimeoutMs,
    poolSize: config.dbPoolSize,
  })
}

/** Names the database files other users can read or write: they hold secrets and children's names. */
function reportDatabaseFileModes(config: Config, log: ReturnType<typeof createLogger>): void {
  const open = databaseFilesOpenToOthers(config.databaseUrl)
  if (open.length === 0) return
  log.warn(
    { databaseFiles: open },
    `database files readable or writable by other users: ${open.join(', ')}; ` +
      `make them the owner's alone: chmod 600 ${open.join(' ')}`,
  )
}

/** Migrations and the demo seed, done once, before any request is served. */
async function prepareDatabase(storage: Storage, config: Config, log: ReturnType<typeof createLogger>): Promise<void> {
  const migrated = await migrate(storage, undefined, { agreementDispositionDays: config.agreementDispositionDays })
  if (migrated.applied.length > 0) log.info({ migrations: migrated.applied }, 'database migrated')
  if (config.seedDemo && (await isEmptyDatabase(storage.db))) {
    // Loaded only when needed: it reads the catalog files (YAML), which a later start never does.
    const { demoBanner, seedDemoIfEmpty } = await import('./demo/seed-demo.js')
    const seed = await seedDemoIfEmpty(storage.db, config.catalogDir, systemClock.now())
    if (seed !== undefined)
      process.stdout.write(`\n${demoBanner(seed, config.publicUrl, `${config.publicUrl}${API_PREFIX}`)}\n\n`)
  }
}

/** What the process that starts the server hears of it. */
export interface StartHooks {
  /** The compile cache the entry turned on, or why not (compile-cache.ts). */
  compileCache?: CompileCache
  /** OpenTelemetry, which the entry started when OTEL_EXPORTER_OTLP_ENDPOINT is set (observability/tracing.ts). */
  spans?: Spans
}

function reportCompileCache(hooks: StartHooks, log: ReturnType<typeof createLogger>): void {
  const cache = hooks.compileCache
  // Workers were started with the same settings as their primary, which has said it already.
  if (cache === undefined || !cluster.isPrimary) return
  if (cache.enabled)
    log.debug({ compileCache: cache.directory, access: cache.access }, `compile cache on (${cache.access})`)
  else log[cache.refused ? 'warn' : 'info']({ compileCache: 'off' }, `compile cache off: ${cache.reason}`)
}

function reportFastPath(status: AppServices['fastPath'], log: ReturnType<typeof createLogger>): void {
  // Every worker has the same settings: the first one says it.
  if (!cluster.isPrimary && cluster.worker?.id !== 1) return
  if (status.on) log.info({ fastPath: 'on' }, 'fast path on: hot requests are answered before the router')
  else log.info({ fastPath: 'off' }, `fast path off: ${status.why}`)
}

function reportMail(sending: boolean, log: ReturnType<typeof createLogger>): void {
  if (!cluster.isPrimary && cluster.worker?.id !== 1) return
  if (sending) log.info({ mail: 'smtp' }, 'mail sent through SMTP_URL')
  else log.info({ mail: 'held' }, "mail kept in the outbox: SMTP_URL is unset (read it on the dashboard's Outbox page)")
}

function saveCompileCache(hooks: StartHooks, log: ReturnType<typeof createLogger>): void {
  const cache = hooks.compileCache
  // Right after the first turn of serving, not at exit: a server stopped soon after it starts (a
  // deploy checked and rolled back, a test) or killed has still made the next start faster. A
  // read-only cache was filled at install, and is never written by the service.
  if (cache?.enabled && cache.access === 'read-write')
    setImmediate(() => {
      cache.flush()
      log.debug({ compileCache: cache.directory }, 'compile cache saved')
    })
}

async function serve(
  storage: Storage,
  config: Config,
  log: ReturnType<typeof createLogger>,
  hooks: StartHooks,
): Promise<void> {
  // A worker's GET /metrics answers for all workers, which only the primary sees.
  // Loaded only with metrics on: prom-client loads OpenTelemetry's API as it starts.
  const relay = config.metrics ? await import('./observability/metrics-cluster.js') : undefined
  const relayed = cluster.isWorker && relay !== undefined ? { scrape: relay.askPrimary() } : {}
  const app = await buildApp({ config, storage, logger: log, ...relayed })
  reportFastPath(app.services.fastPath, log)
  reportMail(app.services.mail !== undefined, log)
  const metrics = app.services.metrics
  if (metrics !== undefined && cluster.isWorker) relay?.shareWithPrimary(metrics.registry)
  const scrapes =
    metrics !== undefined && cluster.isPrimary && config.metricsPort !== undefined
      ? await serveScrapes(config, () => metrics.scrape(), log)
      : undefined
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
      .then(() => scrapes?.close())
      .then(() => storage.close())
      // The last spans (this request's, the close's) are sent before the process ends.
      .then(() => hooks.spans?.shutdown())
      .then(() => process.exit(0))
      .catch((error: unknown) => {
        log.error({ err: error }, 'error while closing')
        process.exit(1)
      })
  }
  process.on('SIGINT', () => shutdown('SIGINT'))
  process.on('SIGTERM', () => shutdown('SIGTERM'))

  await app.listen({ port: config.port, host: config.host })
  if (cluster.isPrimary) log.info({ engine: storage.engine }, `API reference at ${config.publicUrl}/docs`)
  saveCompileCache(hooks, log)
}

/** The listener of METRICS_PORT, on HOST, which serves `/metrics` only. */
async function serveScrapes(
  config: Config,
  scrape: Scrape,
  log: ReturnType<typeof createLogger>,
): Promise<{ close(): Promise<void> }> {
  const listener = await listenForScrapes(config.metricsPort!, config.host, scrape)
  log.info({ metricsPort: listener.port }, `metrics at http://${config.host}:${listener.port}/metrics`)
  return listener
}

function reportMetrics(config: Config, log: ReturnType<typeof createLogger>): void {
  if (!config.metrics) log.info({ metrics: 'off' }, 'metrics off: set METRICS_TOKEN or METRICS_PORT to serve /metrics')
  else if (config.metricsToken !== undefined) log.info({ metrics: 'on' }, 'metrics at /metrics (METRICS_TOKEN)')
}

/** Loopback endpoints are for a developer's own machine: a deployment that allows them says so. */
function reportWebhookLoopback(config: Config, log: ReturnType<typeof createLogger>): void {
  if (!config.webhookAllowLoopback) return
  log.warn(
    { webhookAllowLoopback: true },
    'WEBHOOK_ALLOW_LOOPBACK is on: webhook endpoints on this machine (http:// to localhost, 127.0.0.1, [::1]) ' +
      'are accepted; for local development only, never in production',
  )
}

function supervise(config: Config, log: ReturnType<typeof createLogger>, gathered: Scrape | undefined): void {
  let stopping = false
  const scrapes =
    gathered !== undefined && config.metricsPort !== undefined ? serveScrapes(config, gathered, log) : undefined
  scrapes?.catch((error: unknown) => {
    log.error({ err: error }, 'could not listen on METRICS_PORT')
    process.exit(1)
  })
  const fork = () => cluster.fork().on('online', () => log.debug('worker online'))
  for (let i = 0; i < config.workers; i++) fork()
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return
    log.error({ pid: worker.process.pid, code, signal }, 'worker died; starting another')
    setTimeout(fork, 500)
  })
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1)
    stopping = true
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal)
    let left = Object.keys(cluster.workers ?? {}).length
    if (left === 0) process.exit(0)
    cluster.on('exit', () => {
      if (--left === 0) process.exit(0)
    })
  }
  process.on('SIGINT', () => stop('SIGINT'))
  process.on('SIGTERM', () => stop('SIGTERM'))
  log.info({ workers: config.workers }, `${config.workers} workers; API reference at ${config.publicUrl}/docs`)
}

async function main(hooks: StartHooks): Promise<void> {
  const config = readConfig()
  const log = createLogger(config.logLevel)
  reportCompileCache(hooks, log)
  // Before storage opens and the app is built: both wrap their seams only if spans are installed.
  if (hooks.spans !== undefined) {
    installSpans(hooks.spans)
    if (cluster.isPrimary) log.info({ traces: 'on' }, 'traces on: exported to OTEL_EXPORTER_OTLP_ENDPOINT')
  }
  if (cluster.isPrimary) {
    reportMetrics(config, log)
    reportWebhookLoopback(config, log)
  }
  if (cluster.isPrimary && config.workers > 1) {
    // The primary only prepares the database; each worker opens its own connection.
    const storage = open(config)
    try {
      // While the database is open, so that its -wal and -shm are there to be looked at too.
      reportDatabaseFileModes(config, log)
      await prepareDatabase(storage, config, log)
    } finally {
      await storage.close()
    }
    // Gathered before the first fork, so that no worker's question finds nobody listening.
    const gathered = config.metrics ? (await import('./observability/metrics-cluster.js')).gatherWorkers() : undefined
    supervise(config, log, gathered)
    saveCompileCache(hooks, log)
    return
  }
  // One process: the connection that serves also migrates and seeds (one open, not two).
  const storage = open(config, true)
  if (cluster.isPrimary) {
    reportDatabaseFileModes(config, log)
    await prepareDatabase(storage, config, log)
  }
  await serve(storage, config, log, hooks)
}

/** Starts the server; a failure to start is printed and ends the process. */
export function run(hooks: StartHooks = {}): void {
  main(hooks).catch((error: unknown) => {
    // A database newer than the code is the operator's to resolve, not a bug: the message says how.
    const text =
      error instanceof NewerDatabaseError
        ? error.message
        : error instanceof Error
          ? (error.stack ?? error.message)
          : String(error)
    process.stderr.write(`failed to start: ${text}\n`)
    process.exit(1)
  })
}
