/**
 * Configuration comes from the environment only, is read once at start, checked, and frozen.
 * Every variable, its default and its meaning is listed in docs/configuration.md.
 */
import path from 'node:path'
import { DEFAULT_DISPOSITION_DAYS, MAX_DISPOSITION_DAYS } from './domain/agreement-terms.js'

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'

export interface Config {
  readonly port: number
  readonly host: string
  /** Address partners use to reach the service; shown in the OpenAPI document and examples. */
  readonly publicUrl: string
  /** `sqlite:<file>` (default `sqlite:data/curriculum.db`) or `postgres://...`. */
  readonly databaseUrl: string
  readonly logLevel: LogLevel
  /** Requests accepted per key in any rolling window. */
  readonly rateLimit: number
  readonly rateLimitWindowSeconds: number
  /** Requests accepted per organisation, all its keys together, in the same rolling window. */
  readonly organisationRateLimit: number
  /**
   * Active keys (neither revoked nor expired) an organisation may hold; creating one more is
   * refused. Each key has its own rate limit, so without a cap more keys mean more requests.
   */
  readonly maxKeysPerOrganisation: number
  /** Time to receive a request's headers, and its whole request (headers and body). */
  readonly headersTimeoutMs: number
  readonly requestTimeoutMs: number
  /** How long an idle kept-alive connection stays open. */
  readonly keepAliveTimeoutMs: number
  /** Connections one client address may hold open at once (not applied behind a trusted proxy); 0: no limit. */
  readonly maxConnectionsPerAddress: number
  /** Failed authentications accepted per client address in any rolling window of the same length. */
  readonly authFailureLimit: number
  /** Failed dashboard sign-ins accepted per account and address before delays (four times as many per address). */
  readonly signInFailureLimit: number
  /** Dashboard sign-ups accepted per client address in any hour. */
  readonly signUpLimit: number
  readonly bodyLimitBytes: number
  /** Passed to Fastify's trustProxy: false, true, a hop count, or a comma-separated list of addresses. */
  readonly trustProxy: boolean | number | string
  /** Seed demo data (catalog, organisation, students, keys) when the database is empty. */
  readonly seedDemo: boolean
  readonly catalogDir: string
  /** How often each instance looks for catalog and access changes made elsewhere. */
  readonly changePollMs: number
  /** Disclosure ids per sealed segment of the log (see storage/disclosure-log.ts). */
  readonly disclosureSegmentRows: number
  /**
   * PostgreSQL: how long after a segment's last id its lookups are built, so that no slower
   * transaction is still committing into it.
   */
  readonly disclosureSealHorizonMs: number
  /**
   * Enabled webhook endpoints an organisation may have; adding or enabling one more is refused.
   * Each may hold sending slots, so without a cap more endpoints would mean a larger share.
   */
  readonly maxWebhookEndpointsPerOrganisation: number
  /**
   * Days after an agreement's end within which the partner must delete the data, when an agreement
   * is recorded without its own period, and for agreements recorded before periods were.
   */
  readonly agreementDispositionDays: number
  /** Days the change feed keeps a change; cursors with older changes after them answer 410. */
  readonly feedRetentionDays: number
  /** Days the disclosure log keeps a row, by whole sealed segments; 0 keeps every row. */
  readonly disclosureRetentionDays: number
  /** Where the dashboard keeps an uploaded roster export between its preview and its import (mode 0700). */
  readonly rosterUploadDir: string
  /** The largest roster export the dashboard accepts, in bytes (ROSTER_UPLOAD_MAX_MIB). */
  readonly rosterUploadMaxBytes: number
  /** Deadline of one webhook delivery attempt. */
  readonly webhookTimeoutMs: number
  /** Local development and tests only: webhooks may go to loopback addresses (and plain http there). */
  readonly webhookAllowLoopback: boolean
  /** Redis for state shared by instances (rate limits); undefined keeps it in this process. */
  readonly redisUrl: string | undefined
  /** Prefix of every Redis key this service writes, so deployments can share a Redis. */
  readonly redisKeyPrefix: string
  /** How long a rate-limit decision may wait for Redis before this instance decides alone. */
  readonly redisCommandTimeoutMs: number
  /** Worker processes to run (node:cluster); more than one needs REDIS_URL. */
  readonly workers: number
  /** PostgreSQL connection pool size per process. */
  readonly dbPoolSize: number
  /** Upper bound on how long a storage call may take before the request answers 503. */
  readonly storageTimeoutMs: number
  /** SQLite synchronous pragma: NORMAL (durable across process crashes) or FULL (also power loss). */
  readonly sqliteSynchronous: 'NORMAL' | 'FULL'
  /**
   * How much of the SQLite file the writing connection (which serves progress reads too) reads
   * through a memory map (MiB; 0: none).
   */
  readonly sqliteMmapMib: number
  /** How far V8 lets the old generation grow between full collections (%; 0: V8's own choice); heap-growth.ts. */
  readonly heapGrowingPercent: number
  /**
   * Where Node keeps the server's compiled code between starts (compile-cache.ts); undefined: not
   * kept. Never inside the folder the code is loaded from.
   */
  readonly compileCacheDir: string | undefined
  /**
   * `auto`: hot requests are answered before the router where the set-up allows it (http/fast/);
   * `off`: every request goes through the router.
   */
  readonly fastPath: 'auto' | 'off'
  /**
   * `OTEL_EXPORTER_OTLP_ENDPOINT` is set: the entry has started OpenTelemetry
   * (observability/tracing.ts), which reads that variable and the other OTEL_* ones itself.
   */
  readonly tracing: boolean
  /** Bearer token for `GET /metrics` on the main port; undefined: not served there. */
  readonly metricsToken: string | undefined
  /** A separate port serving only `/metrics` (on HOST); undefined: none. */
  readonly metricsPort: number | undefined
  /** Whether metrics are collected: on when a token or a port says where to read them, unless METRICS=off. */
  readonly metrics: boolean
}

export class ConfigError extends Error {
  override name = 'ConfigError'
}

type Env = Readonly<Record<string, string | undefined>>

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]
  if (raw === undefined || raw.trim() === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max} (got "${raw}")`)
  }
  return value
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase()
  if (raw === undefined || raw === '') return fallback
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true
  if (['0', 'false', 'no', 'off'].includes(raw)) return false
  throw new ConfigError(`${name} must be true or false (got "${env[name]}")`)
}

function oneOf<T extends string>(env: Env, name: string, fallback: T, allowed: readonly T[]): T {
  const raw = env[name]?.trim()
  if (raw === undefined || raw === '') return fallback
  const match = allowed.find((value) => value.toLowerCase() === raw.toLowerCase())
  if (match === undefined) throw new ConfigError(`${name} must be one of ${allowed.join(', ')} (got "${raw}")`)
  return match
}

function trustProxy(env: Env): boolean | number | string {
  const raw = env.TRUST_PROXY?.trim()
  if (raw === undefined || raw === '' || raw === 'false') return false
  if (raw === 'true') return true
  if (/^\d+$/.test(raw)) return Number(raw)
  return raw
}

function databaseUrl(env: Env): string {
  const raw = env.DATABASE_URL?.trim()
  if (raw === undefined || raw === '') return 'sqlite:data/curriculum.db'
  if (/^(sqlite|file):/.test(raw) || /^postgres(ql)?:\/\//.test(raw)) return raw
  throw new ConfigError(
    `DATABASE_URL must start with sqlite:, file: or postgres:// (got "${raw.replace(/\/\/[^@]*@/, '//***@')}")`,
  )
}

function redisUrl(env: Env): string | undefined {
  const raw = env.REDIS_URL?.trim()
  if (raw === undefined || raw === '') return undefined
  if (!/^rediss?:\/\//.test(raw))
    throw new ConfigError(
      `REDIS_URL must start with redis:// or rediss:// (got "${raw.replace(/\/\/[^@]*@/, '//***@')}")`,
    )
  return raw
}

function workers(env: Env): number {
  const count = integer(env, 'WORKERS', 1, 1, 256)
  if (count > 1 && (env.REDIS_URL ?? '').trim() === '') {
    throw new ConfigError(
      `WORKERS=${count} needs REDIS_URL: without a shared store each worker would keep its own rate limit`,
    )
  }
  return count
}

function publicUrl(env: Env, port: number): string {
  const raw = env.PUBLIC_URL?.trim()
  if (raw === undefined || raw === '') return `http://localhost:${port}`
  if (!/^https?:\/\/[^\s/]+(\/[^\s]*)?$/.test(raw))
    throw new ConfigError(`PUBLIC_URL must be an http(s) URL (got "${raw}")`)
  return raw.replace(/\/+$/, '')
}

function compileCacheDir(env: Env): string | undefined {
  const raw = env.COMPILE_CACHE_DIR?.trim()
  if (raw === 'off') return undefined
  return path.resolve(raw || 'data/compile-cache')
}

/** At least 32 characters: a scrape token guards what the service is doing, and is never typed by hand. */
const MIN_METRICS_TOKEN = 32

function metricsToken(env: Env): string | undefined {
  const raw = env.METRICS_TOKEN?.trim()
  if (raw === undefined || raw === '') return undefined
  if (raw.length < MIN_METRICS_TOKEN || !/^[\x21-\x7e]+$/.test(raw))
    throw new ConfigError(
      `METRICS_TOKEN must be at least ${MIN_METRICS_TOKEN} printable characters without spaces (openssl rand -hex 32)`,
    )
  return raw
}

function metricsPort(env: Env, port: number): number | undefined {
  if ((env.METRICS_PORT ?? '').trim() === '') return undefined
  const value = integer(env, 'METRICS_PORT', 0, 0, 65535)
  if (value === port && port !== 0) throw new ConfigError(`METRICS_PORT must differ from PORT (both ${port})`)
  return value
}

export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 3000, 0, 65535)
  const token = metricsToken(env)
  const scrapePort = metricsPort(env, port)
  return Object.freeze({
    port,
    host: env.HOST?.trim() || '127.0.0.1',
    publicUrl: publicUrl(env, port),
    databaseUrl: databaseUrl(env),
    logLevel: oneOf<LogLevel>(env, 'LOG_LEVEL', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    rateLimit: integer(env, 'RATE_LIMIT', 100, 1, 1_000_000),
    rateLimitWindowSeconds: integer(env, 'RATE_LIMIT_WINDOW_SECONDS', 60, 1, 86_400),
    organisationRateLimit: integer(env, 'ORGANISATION_RATE_LIMIT', 300, 1, 10_000_000),
    maxKeysPerOrganisation: integer(env, 'MAX_KEYS_PER_ORGANISATION', 10, 1, 10_000),
    headersTimeoutMs: integer(env, 'HEADERS_TIMEOUT_MS', 10_000, 100, 600_000),
    requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', 15_000, 100, 600_000),
    keepAliveTimeoutMs: integer(env, 'KEEP_ALIVE_TIMEOUT_MS', 72_000, 1_000, 600_000),
    maxConnectionsPerAddress: integer(env, 'MAX_CONNECTIONS_PER_ADDRESS', 256, 0, 1_000_000),
    authFailureLimit: integer(env, 'AUTH_FAILURE_LIMIT', 30, 1, 1_000_000),
    signInFailureLimit: integer(env, 'SIGN_IN_FAILURE_LIMIT', 5, 1, 10_000),
    signUpLimit: integer(env, 'SIGN_UP_LIMIT', 5, 1, 10_000),
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 4096, 64, 1_048_576),
    trustProxy: trustProxy(env),
    seedDemo: boolean(env, 'SEED_DEMO', true),
    catalogDir: path.resolve(env.CATALOG_DIR?.trim() || 'catalog'),
    rosterUploadDir: path.resolve(env.ROSTER_UPLOAD_DIR?.trim() || 'data/roster-uploads'),
    rosterUploadMaxBytes: integer(env, 'ROSTER_UPLOAD_MAX_MIB', 256, 1, 4096) * 1024 * 1024,
    changePollMs: integer(env, 'CHANGE_POLL_MS', 1000, 50, 5000),
    agreementDispositionDays: integer(
      env,
      'AGREEMENT_DISPOSITION_DAYS',
      DEFAULT_DISPOSITION_DAYS,
      0,
      MAX_DISPOSITION_DAYS,
    ),
    webhookTimeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
    maxWebhookEndpointsPerOrganisation: integer(env, 'MAX_WEBHOOK_ENDPOINTS_PER_ORGANISATION', 10, 1, 1000),
    webhookAllowLoopback: boolean(env, 'WEBHOOK_ALLOW_LOOPBACK', false),
    feedRetentionDays: integer(env, 'FEED_RETENTION_DAYS', 90, 1, 36_500),
    disclosureRetentionDays: integer(env, 'DISCLOSURE_RETENTION_DAYS', 0, 0, 36_500),
    disclosureSegmentRows: integer(env, 'DISCLOSURE_SEGMENT_ROWS', 4096, 2, 1_048_576),
    disclosureSealHorizonMs: integer(env, 'DISCLOSURE_SEAL_HORIZON_MS', 60_000, 0, 3_600_000),
    storageTimeoutMs: integer(env, 'STORAGE_TIMEOUT_MS', 2000, 50, 60_000),
    redisUrl: redisUrl(env),
    redisKeyPrefix: env.REDIS_KEY_PREFIX?.trim() || 'curriculum:',
    redisCommandTimeoutMs: integer(env, 'REDIS_COMMAND_TIMEOUT_MS', 250, 10, 60_000),
    workers: workers(env),
    dbPoolSize: integer(env, 'DB_POOL_SIZE', 10, 1, 1000),
    sqliteSynchronous: oneOf(env, 'SQLITE_SYNCHRONOUS', 'NORMAL', ['NORMAL', 'FULL'] as const),
    // SQLite's own ceiling for a memory map is just under 2 GiB (SQLITE_MAX_MMAP_SIZE).
    sqliteMmapMib: integer(env, 'SQLITE_MMAP_MIB', 1024, 0, 2047),
    heapGrowingPercent: integer(env, 'HEAP_GROWING_PERCENT', 100, 0, 1000),
    compileCacheDir: compileCacheDir(env),
    fastPath: oneOf(env, 'FAST_PATH', 'auto', ['auto', 'off'] as const),
    tracing: (env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() ?? '') !== '',
    metricsToken: token,
    metricsPort: scrapePort,
    metrics:
      oneOf(env, 'METRICS', 'auto', ['auto', 'off'] as const) === 'auto' &&
      (token !== undefined || scrapePort !== undefined),
  })
}
