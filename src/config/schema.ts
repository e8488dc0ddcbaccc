/**
 * Every setting once: its environment variable (`env`), the text used when it is unset (`envDefault`,
 * also the Default column of docs/configuration.md), its type and range, and one line of meaning.
 * The Config type and the loader both come from this schema.
 */
import { type Static, type TSchema, Type } from 'typebox'
import { DEFAULT_DISPOSITION_DAYS, MAX_DISPOSITION_DAYS } from '../domain/agreement-terms.js'

/** What each setting carries beside its JSON Schema keywords. */
export interface SettingNotes {
  readonly env: string
  /** Unset: no default, the setting is undefined or derived from others. */
  readonly envDefault?: string
  readonly description: string
  /** The variable counts in units of this many of the setting's (MiB for a byte count). */
  readonly unit?: number
  /** The words the variable accepts, when they are not the setting's own values. */
  readonly envValues?: readonly string[]
}

const MIB = 1024 * 1024

const int = (env: string, envDefault: number, minimum: number, maximum: number, description: string) =>
  Type.Integer({ minimum, maximum, env, envDefault: String(envDefault), description })

const flag = (env: string, envDefault: boolean, description: string) =>
  Type.Boolean({ env, envDefault: String(envDefault), description })

const text = (env: string, envDefault: string, description: string) => Type.String({ env, envDefault, description })

const choice = <const Values extends string[]>(
  env: string,
  values: [...Values],
  envDefault: Values[number],
  description: string,
) => Type.Enum(values, { env, envDefault, description })

const maybeText = (env: string, description: string) =>
  Type.Union([Type.String(), Type.Undefined()], { env, description })

// The order is the order in which the loader reads, and so which of two bad variables is reported.
export const ConfigSchema = Type.Object({
  port: int('PORT', 3000, 0, 65535, 'Port to listen on.'),
  metricsToken: maybeText(
    'METRICS_TOKEN',
    'Bearer token for `GET /metrics` on the main port; unset: not served there.',
  ),
  metricsPort: Type.Union([Type.Integer({ minimum: 0, maximum: 65535 }), Type.Undefined()], {
    env: 'METRICS_PORT',
    description: 'A separate port serving only `/metrics` (on HOST); unset: none.',
  }),
  host: text('HOST', '127.0.0.1', 'Address to bind.'),
  publicUrl: Type.String({
    env: 'PUBLIC_URL',
    envDefault: 'http://localhost:$PORT',
    description: 'Address partners use to reach the service; shown in the OpenAPI document and examples.',
  }),
  databaseUrl: text('DATABASE_URL', 'sqlite:data/curriculum.db', '`sqlite:<file>` or `postgres://...`.'),
  logLevel: choice('LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info', 'Log level.'),
  rateLimit: int('RATE_LIMIT', 100, 1, 1_000_000, 'Requests accepted per key in any rolling window.'),
  rateLimitWindowSeconds: int('RATE_LIMIT_WINDOW_SECONDS', 60, 1, 86_400, 'Length of the rolling window.'),
  organisationRateLimit: int(
    'ORGANISATION_RATE_LIMIT',
    300,
    1,
    10_000_000,
    'Requests accepted per organisation, all its keys together, in the same rolling window.',
  ),
  // Each key has its own rate limit, so without a cap more keys would mean more requests.
  maxKeysPerOrganisation: int('MAX_KEYS_PER_ORGANISATION', 10, 1, 10_000, 'Active keys an organisation may hold.'),
  headersTimeoutMs: int('HEADERS_TIMEOUT_MS', 10_000, 100, 600_000, "Time to receive a request's headers."),
  requestTimeoutMs: int(
    'REQUEST_TIMEOUT_MS',
    15_000,
    100,
    600_000,
    'Time to receive a whole request, headers and body.',
  ),
  keepAliveTimeoutMs: int('KEEP_ALIVE_TIMEOUT_MS', 72_000, 1_000, 600_000, 'How long an idle connection stays open.'),
  maxConnectionsPerAddress: int(
    'MAX_CONNECTIONS_PER_ADDRESS',
    256,
    0,
    1_000_000,
    'Connections one client address may hold open at once (not applied behind a trusted proxy); 0: no limit.',
  ),
  authFailureLimit: int('AUTH_FAILURE_LIMIT', 30, 1, 1_000_000, 'Failed authentications per address per window.'),
  signInFailureLimit: int('SIGN_IN_FAILURE_LIMIT', 5, 1, 10_000, 'Failed sign-ins per account and address.'),
  signUpLimit: int('SIGN_UP_LIMIT', 5, 1, 10_000, 'Dashboard sign-ups accepted per client address in any hour.'),
  passwordResetLimit: int(
    'PASSWORD_RESET_LIMIT',
    10,
    1,
    10_000,
    'Password reset requests accepted per client address in any hour (each account is also sent at most 3 links).',
  ),
  bodyLimitBytes: int('BODY_LIMIT_BYTES', 4096, 64, 1_048_576, 'Largest accepted request body.'),
  trustProxy: Type.Union([Type.Boolean(), Type.Integer({ minimum: 0 }), Type.String()], {
    env: 'TRUST_PROXY',
    envDefault: 'false',
    description: "Fastify's trustProxy: false, true, a hop count, or a comma-separated list of addresses.",
  }),
  seedDemo: flag('SEED_DEMO', true, 'Seed demo data when the database is empty.'),
  catalogDir: text('CATALOG_DIR', 'catalog', 'Folder of the curriculum files.'),
  rosterUploadDir: text('ROSTER_UPLOAD_DIR', 'data/roster-uploads', 'Where uploaded roster exports wait (0700).'),
  rosterUploadMaxBytes: Type.Integer({
    minimum: MIB,
    maximum: 4096 * MIB,
    env: 'ROSTER_UPLOAD_MAX_MIB',
    envDefault: '256',
    unit: MIB,
    description: 'The largest roster export the dashboard accepts, in bytes (the variable counts MiB).',
  }),
  changePollMs: int('CHANGE_POLL_MS', 1000, 50, 5000, 'How often each instance looks for changes made elsewhere.'),
  agreementDispositionDays: int(
    'AGREEMENT_DISPOSITION_DAYS',
    DEFAULT_DISPOSITION_DAYS,
    0,
    MAX_DISPOSITION_DAYS,
    "Days after an agreement's end within which the partner must delete the data, unless it says otherwise.",
  ),
  webhookTimeoutMs: int('WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000, 'Deadline of one webhook delivery attempt.'),
  // Each endpoint may hold sending slots, so without a cap more endpoints would mean a larger share.
  maxWebhookEndpointsPerOrganisation: int(
    'MAX_WEBHOOK_ENDPOINTS_PER_ORGANISATION',
    10,
    1,
    1000,
    'Enabled webhook endpoints an organisation may have.',
  ),
  webhookAllowLoopback: flag(
    'WEBHOOK_ALLOW_LOOPBACK',
    false,
    'Local development and tests only: webhook endpoints on this machine (loopback) are accepted.',
  ),
  ltiAllowLoopback: flag(
    'LTI_ALLOW_LOOPBACK',
    false,
    'Local development and tests only: LTI platforms on this machine (loopback, plain http) are accepted.',
  ),
  smtpUrl: maybeText(
    'SMTP_URL',
    '`smtp://user:password@host:587` or `smtps://...:465`: where mail is sent; unset: it stays in the outbox.',
  ),
  mailFrom: text(
    'MAIL_FROM',
    'Curriculum API <no-reply@localhost>',
    'The sender of every message: an address, or a name and <address>.',
  ),
  mailRetentionDays: int(
    'MAIL_RETENTION_DAYS',
    30,
    1,
    36_500,
    'Days the outbox keeps a message once it is sent, failed or interrupted.',
  ),
  smtpConnectionTimeoutMs: int(
    'SMTP_CONNECTION_TIMEOUT_MS',
    10_000,
    100,
    600_000,
    'Time to connect to the SMTP server.',
  ),
  smtpGreetingTimeoutMs: int('SMTP_GREETING_TIMEOUT_MS', 10_000, 100, 600_000, "Time for the SMTP server's greeting."),
  smtpSocketTimeoutMs: int(
    'SMTP_SOCKET_TIMEOUT_MS',
    30_000,
    100,
    600_000,
    'Longest silence of the SMTP server during a conversation before the attempt ends.',
  ),
  feedRetentionDays: int('FEED_RETENTION_DAYS', 90, 1, 36_500, 'Days the change feed keeps a change.'),
  disclosureRetentionDays: int(
    'DISCLOSURE_RETENTION_DAYS',
    0,
    0,
    36_500,
    'Days the disclosure log keeps a row; 0: all.',
  ),
  disclosureSegmentRows: int('DISCLOSURE_SEGMENT_ROWS', 4096, 2, 1_048_576, 'Disclosure ids per sealed segment.'),
  disclosureSealHorizonMs: int(
    'DISCLOSURE_SEAL_HORIZON_MS',
    60_000,
    0,
    3_600_000,
    "PostgreSQL: how long after a segment's last id its lookups are built, so no slower commit lands in it.",
  ),
  storageTimeoutMs: int('STORAGE_TIMEOUT_MS', 2000, 50, 60_000, 'Bound on a storage call before the request is 503.'),
  redisUrl: maybeText('REDIS_URL', 'Redis for state shared by instances (rate limits); unset: kept in each process.'),
  redisKeyPrefix: text('REDIS_KEY_PREFIX', 'curriculum:', 'Prefix of every Redis key this service writes.'),
  redisCommandTimeoutMs: int(
    'REDIS_COMMAND_TIMEOUT_MS',
    250,
    10,
    60_000,
    'How long a rate-limit decision may wait for Redis before this instance decides alone.',
  ),
  workers: int('WORKERS', 1, 1, 256, 'Worker processes to run (node:cluster); more than one needs REDIS_URL.'),
  dbPoolSize: int('DB_POOL_SIZE', 10, 1, 1000, 'PostgreSQL connection pool size per process.'),
  sqliteSynchronous: choice('SQLITE_SYNCHRONOUS', ['NORMAL', 'FULL'], 'NORMAL', 'SQLite synchronous pragma.'),
  // SQLite's own ceiling for a memory map is just under 2 GiB (SQLITE_MAX_MMAP_SIZE).
  sqliteMmapMib: int('SQLITE_MMAP_MIB', 1024, 0, 2047, 'MiB of the SQLite file read through a memory map; 0: none.'),
  heapGrowingPercent: int('HEAP_GROWING_PERCENT', 100, 0, 1000, 'Old-generation growth between full GCs (%).'),
  compileCacheDir: Type.Union([Type.String(), Type.Undefined()], {
    env: 'COMPILE_CACHE_DIR',
    envDefault: 'data/compile-cache',
    description: "Where Node keeps the server's compiled code between starts; `off`: not kept.",
  }),
  fastPath: choice('FAST_PATH', ['auto', 'off'], 'auto', '`auto`: hot requests skip the router where allowed.'),
  tracing: Type.Boolean({
    env: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    description: 'Set: the entry has started OpenTelemetry, which reads this and the other OTEL_* variables.',
  }),
  requestLog: flag('REQUEST_LOG', true, "Keep the last 7 days of API requests of organisations' keys."),
  metrics: Type.Boolean({
    env: 'METRICS',
    envDefault: 'auto',
    envValues: ['auto', 'off'],
    description: 'Metrics are collected when a token or a port says where to read them, unless `off`.',
  }),
})

export type Config = Readonly<Static<typeof ConfigSchema>>
export type LogLevel = Config['logLevel']

/** One setting: the Config field, its schema and the notes beside it. */
export interface Setting {
  readonly key: keyof Config
  readonly schema: TSchema & SettingNotes & Record<string, unknown>
}

/** Every setting, in the schema's order. */
export const SETTINGS: readonly Setting[] = Object.entries(ConfigSchema.properties).map(([key, schema]) => ({
  key: key as keyof Config,
  schema: schema as unknown as Setting['schema'],
}))
