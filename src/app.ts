/**
 * Builds the HTTP application. It never listens: server.ts does, tests use `inject`, and the
 * benchmark starts it like production.
 *
 * A request flows: response-basics (request id, CORS, OPTIONS) -> access-control (key, limit,
 * scope, agreement) -> schema validation -> route handler -> problem-responses on any error.
 */
import http from 'node:http'
import swagger from '@fastify/swagger'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyBaseLogger, LogController } from 'fastify'
import { type Clock, systemClock } from './clock.js'
import type { Config } from './config.js'
import { requestIdAt } from './domain/request-id.js'
import type { TypedApp } from './http/app-types.js'
import { logAccess } from './http/access-log.js'
import { API_PREFIX } from './http/api-prefix.js'
import { apiV1 } from './http/api-v1.js'
import { buildRepresentations, type CatalogRepresentations } from './http/catalog-representations.js'
import { protectRefusedBodies } from './http/lingering-close.js'
import {
  answerClientError,
  applyTimeouts,
  checkingIntervalMs,
  limitConnectionsPerAddress,
} from './http/connection-limits.js'
import { createFastPath, type FastPath, type FastPathStatus, fastPathStatus } from './http/fast/index.js'
import { openApiOptions } from './http/openapi.js'
import { DEPRECATED_OPERATIONS, type Deprecation } from './domain/deprecation.js'
import { deprecateOperations } from './http/deprecation.js'
import { installProblemResponses, schemaErrorFormatter, sendProblem } from './http/problem-responses.js'
import { ProblemError } from './errors.js'
import { policyHeader } from './http/rate-limit-headers.js'
import { responseBasics } from './http/response-basics.js'
import { buildResponseSerializer } from './http/response-serializers.js'
import { buildLazyValidator } from './http/lazy-validators.js'
import { docsRoutes } from './http/routes/docs.js'
import { docsPagesRoutes } from './http/routes/docs-pages.js'
import { healthRoutes } from './http/routes/health.js'
import { homeRoutes } from './http/routes/home.js'
import { signingKeyRoutes } from './http/routes/signing-keys.js'
import { dashboardPlugin } from './dashboard/dashboard-plugin.js'
import { LTI_PREFIX, ltiPlugin } from './lti/lti-plugin.js'
import { toolKeys } from './services/lti-tool-keys.js'
import { LtiScoreSender, SCORE_POLL_MS } from './services/lti-score-sender.js'
import {
  LessonSchema,
  LessonsResponseSchema,
  LessonSummarySchema,
  TierSchema,
  TiersResponseSchema,
} from './http/schemas/catalog.js'
import { ProblemSchema } from './http/schemas/common.js'
import { EnrollmentSchema, ProgressEntrySchema, StudentProgressSchema } from './http/schemas/students.js'
import { DeletionAttestationSchema, SigningKeysSchema } from './http/schemas/agreements.js'
import {
  ProgressChangeSchema,
  ProgressChangesSchema,
  RosterSchema,
  RosterStudentSchema,
  StudentNoticeSchema,
} from './http/schemas/sync.js'
import { CatalogState } from './services/catalog-state.js'
import { ChangeWatcher } from './services/change-watcher.js'
import { KeyCache } from './services/key-cache.js'
import { KeyUsage } from './services/key-usage.js'
import { RequestLog } from './services/request-log.js'
import { DisclosureSealer } from './services/disclosure-sealer.js'
import { PRUNE_INTERVAL_MS, RetentionPruner } from './services/retention-pruner.js'
import { DISPOSITION_INTERVAL_MS, DispositionTask } from './services/disposition-task.js'
import { NOTICE_INTERVAL_MS, NoticeTask } from './services/notice-task.js'
import { keySetSource, signingKeySource } from './services/signing-keys.js'
import { WebhookDeliverer } from './webhooks/webhook-deliverer.js'
import { WEBHOOK_BODY_SCHEMAS } from './domain/webhook-payloads.js'
import { heldMailLog } from './mail/held-mail-log.js'
import { MAIL_POLL_MS, MailWorker } from './mail/mail-worker.js'
import { smtpSettings } from './mail/smtp-sender.js'
import { createLimiters, type Limiters } from './services/limiters.js'
import { recordRequest } from './instrumentation/metrics-channels.js'
import type { Metrics } from './observability/metrics.js'
import { metricsRoute, type Scrape } from './observability/metrics-route.js'
import type { Storage } from './storage/connection.js'

export interface AppOptions {
  config: Config
  storage: Storage
  clock?: Clock
  /** A pino logger, or false for none (tests). */
  logger?: FastifyBaseLogger | false
  /** Limiters to use instead of those the config describes (tests). */
  limiters?: Limiters
  /**
   * Background polls: look for changes made elsewhere every CHANGE_POLL_MS, seal the
   * disclosure log's complete segments every second, and prune the change feed (and the
   * disclosure log, with a retention) and end the links of ended agreements at start and hourly.
   * On unless false (tests call `services.changes.check()`, `services.sealer.run()`,
   * `services.pruner.run()` and `services.disposer.run()` instead, so no poll can land between
   * two of their steps).
   */
  pollChanges?: boolean
  /**
   * What `GET /metrics` answers, instead of this process's own registry: with WORKERS=n, the
   * metrics of all workers together, gathered by the primary (server.ts).
   */
  scrape?: Scrape
  /** Operations announced for removal, instead of DEPRECATED_OPERATIONS (tests). */
  deprecations?: Readonly<Record<string, Deprecation>>
}

export interface AppServices {
  readonly catalog: CatalogState<CatalogRepresentations>
  readonly keys: KeyCache
  readonly changes: ChangeWatcher
  readonly usage: KeyUsage
  readonly limiters: Limiters
  readonly sealer: DisclosureSealer
  readonly pruner: RetentionPruner
  /** Ends the links of organisations whose agreement's disposition period ran out. */
  readonly disposer: DispositionTask
  /** Sends the time-based notices that are due (cases/due-notices.ts). */
  readonly notices: NoticeTask
  readonly webhooks: WebhookDeliverer
  /** Sends the mail outbox; undefined without SMTP_URL, when messages stay in the outbox. */
  readonly mail: MailWorker | undefined
  /** Sends the scores LTI progress queued to the platforms' gradebooks. */
  readonly ltiScores: LtiScoreSender
  /** Whether hot requests are answered before the router (http/fast/), or why not. */
  readonly fastPath: FastPathStatus
  /** This process's metrics, when they are on (METRICS_TOKEN or METRICS_PORT, and not METRICS=off). */
  readonly metrics: Metrics | undefined
  /** The request log of the API requests of organisations' keys; undefined with REQUEST_LOG off. */
  readonly requestLog: RequestLog | undefined
}

declare module 'fastify' {
  interface FastifyInstance {
    services: AppServices
  }
}

const USAGE_FLUSH_MS = 30_000
/** How often complete segments of the disclosure log are sealed. */
const SEAL_INTERVAL_MS = 1000
/** How often the webhook outbox is looked at for due deliveries. */
const WEBHOOK_POLL_MS = 1000

/** A bug in the fast path must not take the process down: Fastify answers instead. */
function answerFast(
  fastPath: FastPath,
  request: http.IncomingMessage,
  response: http.ServerResponse,
  log: FastifyBaseLogger,
  route: () => void,
): boolean {
  try {
    return fastPath(request, response, route)
  } catch (error) {
    log.error({ err: error }, 'fast path failed; answering through the router')
    return response.headersSent
  }
}
const MAX_PARAM_LENGTH = 300

export async function buildApp(options: AppOptions): Promise<TypedApp> {
  const { config } = options
  // Loaded only with metrics on: prom-client loads OpenTelemetry's API as it starts.
  const metering = config.metrics ? await import('./observability/metrics.js') : undefined
  const metrics = metering === undefined ? undefined : new metering.Metrics(options.storage)
  // Everything the app builds sees the storage whose writes are timed, when metrics are on.
  const storage = metrics === undefined ? options.storage : metering!.meteredStorage(options.storage, metrics)
  const clock = options.clock ?? systemClock
  // Set once the services exist; until then (and when off) every request goes to Fastify.
  let fastPath: FastPath | undefined
  const connectionLimits = {
    headersTimeoutMs: Math.min(config.headersTimeoutMs, config.requestTimeoutMs),
    requestTimeoutMs: config.requestTimeoutMs,
    keepAliveTimeoutMs: config.keepAliveTimeoutMs,
    maxConnectionsPerAddress: config.maxConnectionsPerAddress,
  }
  const app = Fastify({
    ...(options.logger ? { loggerInstance: options.logger } : { logger: false }),
    serverFactory: (handler) => {
      const handle = (request: http.IncomingMessage, response: http.ServerResponse) => {
        const route = () => handler(request, response)
        if (fastPath === undefined || !answerFast(fastPath, request, response, app.log, route)) route()
      }
      const server = http.createServer({ connectionsCheckingInterval: checkingIntervalMs(connectionLimits) }, handle)
      applyTimeouts(server, connectionLimits)
      protectRefusedBodies(server, config.bodyLimitBytes, handle)
      // Behind a proxy every connection comes from the proxy: the limit would refuse everybody.
      if (config.trustProxy === false)
        limitConnectionsPerAddress(server, config.maxConnectionsPerAddress, () => app.log)
      return server
    },
    clientErrorHandler: answerClientError,
    // One access-log line per response is written by our own onResponse hook.
    logController: new LogController({ disableRequestLogging: true }),
    // UUIDv7: the id names the millisecond the request arrived (domain/request-id.ts).
    genReqId: () => requestIdAt(clock.now()),
    schemaController: {
      compilersFactory: { buildSerializer: buildResponseSerializer, buildValidator: buildLazyValidator },
    },
    requestIdHeader: false,
    bodyLimit: config.bodyLimitBytes,
    // A hop count is accepted at run time although the type omits it.
    trustProxy: config.trustProxy as boolean | string,
    schemaErrorFormatter,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: true, useDefaults: false } },
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // URLs the router cannot even parse never reach the hooks; answer them in the same form.
    frameworkErrors: (error, request, reply) => {
      responseBasics(request, reply, () => {})
      const detail =
        error.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? `A path segment is longer than ${MAX_PARAM_LENGTH} characters.`
          : 'The URL is malformed: check its percent-encoding (a % must be followed by two hexadecimal digits).'
      sendProblem(request, reply, new ProblemError('invalid_request', detail))
    },
  }).withTypeProvider<TypeBoxTypeProvider>()

  const windowMs = config.rateLimitWindowSeconds * 1000
  const limiters = options.limiters ?? (await createLimiters(config, clock, app.log))
  const keys = new KeyCache({ db: storage.keyLookups, clock })
  const usage = new KeyUsage(storage, clock)
  const requestLog = config.requestLog ? new RequestLog({ writes: storage.writes, log: app.log }) : undefined
  const catalog = await CatalogState.load(storage.db, buildRepresentations)
  const changes = new ChangeWatcher({ db: storage.db, catalog, keys, log: app.log })
  const sealer = new DisclosureSealer({
    storage,
    clock,
    segmentRows: config.disclosureSegmentRows,
    horizonMs: config.disclosureSealHorizonMs,
    log: app.log,
  })
  const pruner = new RetentionPruner({
    storage,
    clock,
    feedRetentionDays: config.feedRetentionDays,
    disclosureRetentionDays: config.disclosureRetentionDays,
    mailRetentionDays: config.mailRetentionDays,
    log: app.log,
  })
  const disposer = new DispositionTask({ storage, clock, log: app.log })
  const smtp = smtpSettings(config)
  const held = smtp === undefined ? heldMailLog(app.log) : undefined
  const deprecations = options.deprecations ?? DEPRECATED_OPERATIONS
  const noticeContext = { publicUrl: config.publicUrl, ...(held ? { held } : {}), deprecations }
  const notices = new NoticeTask({ storage, clock, log: app.log, notices: noticeContext })
  const webhooks = new WebhookDeliverer({
    storage,
    clock,
    log: app.log,
    timeoutMs: config.webhookTimeoutMs,
    allowLoopback: config.webhookAllowLoopback,
    notices: noticeContext,
  })
  const mail = smtp === undefined ? undefined : new MailWorker({ db: storage.db, clock, log: app.log, smtp })
  const ltiToolKeys = toolKeys(storage.db, clock)
  const ltiScores = new LtiScoreSender({
    db: storage.db,
    clock,
    log: app.log,
    toolKeys: ltiToolKeys,
    allowLoopback: config.ltiAllowLoopback,
  })
  const fastPathState = fastPathStatus(config, limiters.inProcess)
  metrics?.watch({ keys, limiters, requestLog })
  app.decorate('services', {
    catalog,
    keys,
    changes,
    usage,
    limiters,
    sealer,
    pruner,
    disposer,
    notices,
    webhooks,
    mail,
    ltiScores,
    fastPath: fastPathState,
    metrics,
    requestLog,
  })
  app.decorateRequest('principal', null)

  for (const schema of [
    ProblemSchema,
    TierSchema,
    TiersResponseSchema,
    LessonSummarySchema,
    LessonsResponseSchema,
    LessonSchema,
    ProgressEntrySchema,
    StudentProgressSchema,
    EnrollmentSchema,
    RosterStudentSchema,
    RosterSchema,
    ProgressChangeSchema,
    StudentNoticeSchema,
    ProgressChangesSchema,
    DeletionAttestationSchema,
    SigningKeysSchema,
    ...Object.values(WEBHOOK_BODY_SCHEMAS),
  ]) {
    app.addSchema(schema)
  }
  deprecateOperations(app, deprecations)
  await app.register(swagger, openApiOptions(config))
  installProblemResponses(app, { bodyLimit: config.bodyLimitBytes })
  // Bodies are JSON only; Fastify's built-in text/plain parser would let text reach validation.
  app.removeContentTypeParser('text/plain')

  const accessLogOn = Boolean(options.logger) && ['trace', 'debug', 'info'].includes(app.log.level)
  const access = {
    keys,
    usage,
    limiter: limiters.requests,
    organisationLimiter: limiters.organisationRequests,
    authFailures: limiters.authFailures,
    clock,
    policy: policyHeader(limiters.requests.limit, windowMs / 1000, limiters.organisationRequests.limit),
    writes: storage.writes,
  }
  const fast = fastPathState.on
    ? createFastPath(app, {
        ...access,
        ...fastPathState.limits,
        catalog,
        storage,
        accessLog: accessLogOn ? app.log : undefined,
        deprecated: new Set(Object.keys(deprecations)),
        requestLog,
      })
    : undefined
  fastPath = fast?.answer

  app.addHook('onRequest', responseBasics)
  // One access-log line per response, at info; not even the hook runs when info is off.
  if (accessLogOn) {
    app.addHook('onResponse', (request, reply, done) => {
      logAccess(request.log, {
        method: request.method,
        url: request.url,
        status: reply.statusCode,
        elapsedMs: reply.elapsedTime,
        keyId: request.principal?.keyId,
      })
      done()
    })
  }

  // Both request paths log their answers to a key; this is the router's entry (fast/replies.ts the other).
  if (requestLog !== undefined) {
    app.addHook('onResponse', (request, reply, done) => {
      const key = request.principal
      if (key !== null) {
        const route = request.routeOptions.url ?? 'unmatched'
        const problem = reply.problemCode ?? undefined
        requestLog.record(
          key,
          request.method,
          route,
          reply.statusCode,
          problem,
          reply.elapsedTime,
          request.id,
          request.ip,
        )
      }
      done()
    })
  }

  // Both request paths count their answers with recordRequest; this is the router's call.
  if (metrics !== undefined) {
    app.addHook('onResponse', (request, reply, done) => {
      recordRequest(request.routeOptions.url ?? 'unmatched', request.method, reply.statusCode, reply.elapsedTime)
      done()
    })
    if (config.metricsToken !== undefined)
      metricsRoute(app, config.metricsToken, options.scrape ?? (() => metrics.scrape()))
  }

  // The API's route templates as registered, for the request log pages' route filter.
  const apiRoutes = new Set<string>()
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith(`${API_PREFIX}/`)) apiRoutes.add(route.url)
  })
  await app.register(apiV1, {
    prefix: API_PREFIX,
    access: { ...access, decided: fast?.takeVerdict },
    storage,
    catalog,
    clock,
  })
  healthRoutes(app, { storage, catalog, limiters, timeoutMs: config.storageTimeoutMs })
  const signingKey = signingKeySource(storage.db)
  signingKeyRoutes(app, keySetSource(storage.db, signingKey))
  docsRoutes(app, {
    timeoutMs: config.webhookTimeoutMs,
    maxEndpoints: config.maxWebhookEndpointsPerOrganisation,
    allowLoopback: config.webhookAllowLoopback,
  })
  docsPagesRoutes(app)
  homeRoutes(app)
  await app.register(ltiPlugin, {
    prefix: LTI_PREFIX,
    storage,
    clock,
    toolKeys: ltiToolKeys,
    publicUrl: config.publicUrl,
    allowLoopback: config.ltiAllowLoopback,
  })
  await app.register(dashboardPlugin, {
    prefix: '/dashboard',
    storage,
    clock,
    limiters,
    openApi: () => app.swagger() as Record<string, unknown>,
    flushUsage: () => usage.flush(),
    flushRequestLog: async () => {
      // A page shows what storage has; an outage is the log's own to report.
      await requestLog?.flush().catch(() => {})
    },
    apiRoutes: () => [...apiRoutes].sort(),
    maxKeysPerOrganisation: config.maxKeysPerOrganisation,
    maxWebhookEndpoints: config.maxWebhookEndpointsPerOrganisation,
    webhookAllowLoopback: config.webhookAllowLoopback,
    ltiAllowLoopback: config.ltiAllowLoopback,
    agreementDispositionDays: config.agreementDispositionDays,
    signingKey,
    rosterUploads: { dir: config.rosterUploadDir, maxBytes: config.rosterUploadMaxBytes },
    mail: {
      publicUrl: config.publicUrl,
      sending: smtp !== undefined,
      held,
    },
  })

  await changes.start(options.pollChanges === false ? 0 : config.changePollMs)
  sealer.start(options.pollChanges === false ? 0 : SEAL_INTERVAL_MS)
  if (options.pollChanges !== false) {
    pruner.start(PRUNE_INTERVAL_MS)
    // Once at start too, so that an instance restarted more often than hourly still prunes.
    pruner.run().catch((err: unknown) => app.log.warn({ err }, 'could not prune the change feed or the disclosure log'))
    disposer.start(DISPOSITION_INTERVAL_MS)
    disposer.run().catch((err: unknown) => app.log.warn({ err }, 'could not end the links of ended agreements'))
    notices.start(NOTICE_INTERVAL_MS)
    notices.run().catch((err: unknown) => app.log.warn({ err }, 'could not send the notices that are due'))
  }
  webhooks.start(options.pollChanges === false ? 0 : WEBHOOK_POLL_MS)
  mail?.start(options.pollChanges === false ? 0 : MAIL_POLL_MS)
  ltiScores.start(options.pollChanges === false ? 0 : SCORE_POLL_MS)
  const usageTimer = setInterval(
    () => usage.flush().catch((err: unknown) => app.log.warn({ err }, 'could not record key usage')),
    USAGE_FLUSH_MS,
  )
  const sweepTimer = setInterval(() => limiters.sweep(), windowMs)
  usageTimer.unref()
  sweepTimer.unref()
  if (options.pollChanges !== false) requestLog?.start()
  app.addHook('onClose', async () => {
    metrics?.close()
    changes.stop()
    await sealer.stop()
    await pruner.stop()
    await disposer.stop()
    await notices.stop()
    await webhooks.stop()
    await mail?.stop()
    await ltiScores.stop()
    clearInterval(usageTimer)
    clearInterval(sweepTimer)
    await usage.flush().catch(() => {})
    await requestLog?.stop()
    if (options.limiters === undefined) await limiters.close()
  })
  return app
}
