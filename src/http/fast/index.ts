/**
 * The catalog's hottest requests answered straight from node:http, before Fastify sees them.
 *
 * A catalog GET with a cached key does little work of its own (a hash, a map lookup, the rate
 * window, a precomputed body), so the framework's per-request machinery (request and reply
 * objects, hook chains, a child logger) would be most of its cost. This handler takes only requests
 * whose whole answer it can give synchronously, with the same access rules, headers and bodies
 * as the routes (a test compares both answer by answer):
 *
 * - GET of an exact catalog URL: `/api/v1/tiers`, `/api/v1/lessons`, `/api/v1/lessons?tier=<id>`,
 *   `/api/v1/lessons?standard=<a code or identifier some lesson has>`, `/api/v1/lessons/<known slug>`,
 *   with no request body;
 * - on SQLite, GET of an exact progress URL (`progress.ts`), answered once its disclosure
 *   is committed; refusals and storage failures go to the router with the verdict taken here;
 * - POST of an exact enroll URL with a small JSON body (`enroll.ts`), answered once the
 *   change and its disclosure are committed; refusals go to the router before the body is
 *   read, and any body but `{"tier": <tier id>}` after, with the bytes read here;
 * - a key already in the key cache (or a header that is not a usable key at all), and limiters
 *   that answer without a round trip (in memory, not Redis).
 *
 * The decision is admission.ts's (local-admission.ts: the router's steps, taken at once); only the
 * writing differs. This file is the folder's one entry (test/package/import-graph.test.ts): app.ts
 * calls `createFastPath`, which also adds to the router what it needs for the requests handed to
 * it (the enroll body's replay), so that no router module knows the fast path exists.
 *
 * Everything else (other paths and methods, percent-encoded or unusual URLs, keys that need a
 * storage lookup, a shared Redis limiter, a proxy-derived client address) returns false and goes
 * through Fastify unchanged.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../../config.js'
import type { CatalogState } from '../../services/catalog-state.js'
import type { RequestLog } from '../../services/request-log.js'
import type { Storage } from '../../storage/connection.js'
import type { Verdict } from '../admission.js'
import type { TypedApp } from '../app-types.js'
import type { CatalogRepresentations } from '../catalog-representations.js'
import { answerCatalog, LESSON_ROUTE, LESSONS_URL, representationFor, TIERS_URL } from './catalog-answers.js'
import type { FastPathContext } from './context.js'
import { fastEnroll } from './enroll.js'
import { replayBody, takeVerdict } from './hand-over.js'
import { type InProcessLimits, LocalAdmission, type LocalAdmissionOptions } from './local-admission.js'
import { fastProgress, progressStudentId } from './progress.js'
import { startTime } from './replies.js'
import { answerPost, answerProgress, ENROLL_ROUTE, PROGRESS_ROUTE } from './student-requests.js'

/** What admission uses (with limiters that answer at once), plus the catalog and the access log. */
export interface FastPathOptions extends LocalAdmissionOptions {
  /** The RateLimit-Policy field. */
  policy: string
  catalog: CatalogState<CatalogRepresentations>
  /** Where progress reads (when storage can read synchronously) and enrolls go. */
  storage: Storage
  /** The access log, when it is on (info level); the same line as the Fastify path writes. */
  accessLog: FastifyBaseLogger | undefined
  /**
   * Operations announced for removal (`GET /api/v1/tiers`, as http/deprecation.ts names them):
   * their requests are left to the router, which adds the deprecation headers.
   */
  deprecated?: ReadonlySet<string>
  /** The request log, when it is on (REQUEST_LOG); the same entries as the router's hook records. */
  requestLog: RequestLog | undefined
}

/**
 * Answers the request and returns true, or returns false having touched nothing (but perhaps
 * left its admission verdict for the router). Having returned true, it may still hand the
 * request to the router later with `route` (a progress read whose storage failed).
 */
export type FastPath = (request: IncomingMessage, response: ServerResponse, route: () => void) => boolean

/** The fast path, and the verdict it left for the router on a request it handed over (taken once). */
export interface FastPathEntry {
  readonly answer: FastPath
  readonly takeVerdict: (request: IncomingMessage) => Verdict | undefined
}

/** Whether the fast path answers, with the limits it needs, or why not (said once at start). */
export type FastPathStatus =
  | { readonly on: true; readonly limits: InProcessLimits }
  | { readonly on: false; readonly why: string }

/**
 * The fast path decides at once, so it needs limits kept in this process, and the client address
 * as the socket gives it; otherwise every request goes through the router.
 */
export function fastPathStatus(
  config: Pick<Config, 'fastPath' | 'trustProxy' | 'tracing'>,
  limits: InProcessLimits | undefined,
): FastPathStatus {
  if (config.fastPath === 'off') return { on: false, why: 'FAST_PATH is off' }
  // Traced requests all take the router, the one path whose spans the trace test checks.
  if (config.tracing)
    return { on: false, why: 'OTEL_EXPORTER_OTLP_ENDPOINT is set: traced requests go through the router' }
  if (config.trustProxy !== false)
    return {
      on: false,
      why: "TRUST_PROXY is set: client addresses come from the proxy's headers, which the router reads",
    }
  if (limits === undefined)
    return { on: false, why: 'the rate limits are shared in Redis (REDIS_URL), which the fast path cannot wait for' }
  return { on: true, limits }
}

/**
 * The fast path over `options`. Called before the API's routes are registered: the enroll route
 * gets the hook that gives it a body the fast path read (hand-over.ts).
 */
export function createFastPath(app: TypedApp, options: FastPathOptions): FastPathEntry {
  app.addHook('onRoute', (route) => {
    if (route.method !== 'POST' || route.url !== ENROLL_ROUTE) return
    route.preParsing = [...[route.preParsing ?? []].flat(), replayBody]
  })
  const context: FastPathContext = {
    catalog: options.catalog,
    clock: options.clock,
    policy: options.policy,
    accessLog: options.accessLog,
    requestLog: options.requestLog,
    admission: new LocalAdmission(options),
    progress: fastProgress(options.storage, options.catalog),
    enroll: fastEnroll(options.storage),
  }
  const routed = options.deprecated === undefined ? undefined : leftToRouter(options.deprecated)
  if (routed === undefined)
    return { answer: (request, response, route) => answer(context, request, response, route), takeVerdict }
  return {
    answer: (request, response, route) => !routed(request) && answer(context, request, response, route),
    takeVerdict,
  }
}

/**
 * Which requests of the fast path's own operations go to the router because their operation is
 * deprecated; undefined when none is, so that nothing is checked per request.
 */
function leftToRouter(deprecated: ReadonlySet<string>): ((request: IncomingMessage) => boolean) | undefined {
  const tiers = deprecated.has(`GET ${TIERS_URL}`)
  const lessons = deprecated.has(`GET ${LESSONS_URL}`)
  const lesson = deprecated.has(`GET ${LESSON_ROUTE}`)
  const progress = deprecated.has(`GET ${PROGRESS_ROUTE}`)
  const enroll = deprecated.has(`POST ${ENROLL_ROUTE}`)
  if (!(tiers || lessons || lesson || progress || enroll)) return undefined
  return (request) => {
    // The only POST the fast path answers is an enroll, and the only GETs the catalog's and progress.
    if (request.method !== 'GET') return enroll
    const path = request.url!.split('?', 1)[0]!
    if (path === TIERS_URL) return tiers
    if (path === LESSONS_URL) return lessons
    return path.startsWith(`${LESSONS_URL}/`) ? lesson : progress
  }
}

function answer(context: FastPathContext, request: IncomingMessage, response: ServerResponse, route: () => void) {
  if (request.method !== 'GET') return answerPost(context, request, response, route)
  const url = request.url!
  const representation = representationFor(context, url)
  const progress = context.progress
  const studentId = representation === undefined && progress !== undefined ? progressStudentId(url) : undefined
  if (representation === undefined && studentId === undefined) return false
  const headers = request.headers
  if (headers['content-length'] !== undefined || headers['transfer-encoding'] !== undefined) return false
  const address = request.socket.remoteAddress
  if (address === undefined) return false
  const started = startTime(context)
  // A key that needs a storage lookup leaves the request to the router, nothing recorded.
  const now = context.clock.now()
  const verdict = context.admission.admit(address, headers.authorization, now, headers['user-agent'])
  if (verdict === undefined) return false
  if (studentId !== undefined)
    return answerProgress(context, progress!, request, response, route, studentId, verdict, now, started)
  if (representation === undefined) return false // (for the type: one of the two is set)
  answerCatalog(context, request, response, representation, verdict, now, started)
  return true
}
