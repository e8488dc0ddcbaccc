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
 *   `/api/v1/lessons/<known slug>`, with no request body;
 * - on SQLite, GET of an exact progress URL (`progress.ts`), answered once its disclosure
 *   is committed; refusals and storage failures go to the router with the verdict taken here;
 * - POST of an exact enroll URL with a small JSON body (`enroll.ts`), answered once the
 *   change and its disclosure are committed; refusals go to the router before the body is
 *   read, and any body but `{"tier": <tier id>}` after, with the bytes read here;
 * - a key already in the key cache (or a header that is not a usable key at all), and limiters
 *   that answer without a round trip (in memory, not Redis).
 *
 * The decision is admission.ts's (LocalAdmission: the router's steps, taken at once); only the
 * writing differs. This file is the folder's one entry (test/package/import-graph.test.ts).
 *
 * Everything else (other paths and methods, percent-encoded or unusual URLs, keys that need a
 * storage lookup, a shared Redis limiter, a proxy-derived client address) returns false and goes
 * through Fastify unchanged.
 */
import { randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FastifyBaseLogger } from 'fastify'
import { TIER_IDS } from '../../domain/tiers.js'
import { PROBLEM_CATALOG, type Problem } from '../../errors.js'
import type { Config } from '../../config.js'
import type { CatalogState } from '../../services/catalog-state.js'
import type { InProcessLimits } from '../../services/limiters.js'
import { API_PREFIX } from '../api-prefix.js'
import { logAccess } from '../access-log.js'
import { LocalAdmission, type LocalAdmissionOptions, type Verdict } from '../admission.js'
import { handOver } from '../hand-over.js'
import type { Storage } from '../../storage/connection.js'
import { type EnrollAnswer, enrollStudentId, fastEnroll, plainTier, readsBody } from './enroll.js'
import { fastProgress, type ProgressAnswer, progressStudentId, type StudentOutcome } from './progress.js'
import { type CatalogRepresentations, matchesIfNoneMatch, type Representation } from '../catalog-representations.js'
import { problemBytes } from '../problem-responses.js'
import { type RateState, rateLimitHeaders } from '../rate-limit-headers.js'
import type { ByteString } from '../byte-string.js'
import { EXPOSED_HEADERS } from '../response-basics.js'
import { recordProblem, recordRequest, requestsObserved } from '../../observability/metrics-channels.js'

/** What admission uses (with limiters that answer at once), plus the catalog and the access log. */
export interface FastPathOptions extends LocalAdmissionOptions {
  /** The RateLimit-Policy field. */
  policy: string
  catalog: CatalogState<CatalogRepresentations>
  /** Where progress reads (when storage can read synchronously) and enrolls go. */
  storage: Storage
  /** The access log, when it is on (info level); the same line as the Fastify path writes. */
  accessLog: FastifyBaseLogger | undefined
}

/**
 * Answers the request and returns true, or returns false having touched nothing (but perhaps
 * left its admission verdict for the router). Having returned true, it may still hand the
 * request to the router later with `route` (a progress read whose storage failed).
 */
export type FastPath = (request: IncomingMessage, response: ServerResponse, route: () => void) => boolean

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

/** The body of an answer that has none (a 304). */
const NO_BODY = '' as ByteString

/** Sends a whole answer with Node's public API; `body` goes out as the bytes it holds. */
function send(response: ServerResponse, status: number, headers: Record<string, string>, body: ByteString): void {
  response.writeHead(status, headers)
  response.end(body, 'latin1')
}

const TIERS_URL = `${API_PREFIX}/tiers`
const LESSONS_URL = `${API_PREFIX}/lessons`
const LESSONS_BY_TIER = new Map(TIER_IDS.map((tier) => [`${LESSONS_URL}?tier=${tier}`, tier]))
const LESSON_PREFIX = `${LESSONS_URL}/`
const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8'
/** The router's templates for what the fast path answers, so that both paths count under one name. */
const LESSON_ROUTE = `${LESSON_PREFIX}*`
const PROGRESS_ROUTE = `${API_PREFIX}/students/:id/progress`
const ENROLL_ROUTE = `${API_PREFIX}/students/:id/enroll`

/** When a request started, if anything (the access log, the request metrics) needs it. */
function startTime(accessLog: FastifyBaseLogger | undefined): number {
  return accessLog === undefined && !requestsObserved() ? 0 : performance.now()
}

export function createFastPath(options: FastPathOptions): FastPath {
  const { catalog, clock, policy, accessLog, storage } = options
  const progress = fastProgress(storage, catalog)
  const enroll = fastEnroll(storage)
  const admission = new LocalAdmission(options)

  function representationFor(url: string): Representation | undefined {
    const current = catalog.current
    if (url === TIERS_URL) return current.tiers
    if (url === LESSONS_URL) return current.lessons
    if (url.startsWith(LESSON_PREFIX)) return current.lessonBySlug.get(url.slice(LESSON_PREFIX.length))
    const tier = LESSONS_BY_TIER.get(url)
    return tier === undefined ? undefined : current.lessonsByTier.get(tier)
  }

  /**
   * What every answer carries (response-basics.ts does the same for the router), and the limits
   * when a key was identified.
   */
  function headersFor(requestId: string, rate: RateState | undefined, now: number): Record<string, string> {
    const basics: Record<string, string> = {
      'x-request-id': requestId,
      'access-control-allow-origin': '*',
      'access-control-expose-headers': EXPOSED_HEADERS,
    }
    return rate === undefined ? basics : rateLimitHeaders(rate, policy, now, basics)
  }

  function sendProblem(
    response: ServerResponse,
    requestId: string,
    problem: Problem,
    rate: RateState | undefined,
    now: number,
  ): number {
    const body = problemBytes(problem, requestId)
    const headers = headersFor(requestId, rate, now)
    if (problem.headers !== undefined) Object.assign(headers, problem.headers)
    headers['content-type'] = PROBLEM_CONTENT_TYPE
    headers['content-length'] = String(body.length)
    const status = PROBLEM_CATALOG[problem.code].status
    send(response, status, headers, body)
    recordProblem(problem.code, status)
    return status
  }

  function sendJson(
    response: ServerResponse,
    requestId: string,
    body: ByteString,
    rate: RateState,
    now: number,
  ): number {
    const out = headersFor(requestId, rate, now)
    out['content-type'] = 'application/json; charset=utf-8'
    out['content-length'] = String(body.length)
    send(response, 200, out, body)
    return 200
  }

  /**
   * Whether a student request is the fast path's to answer. A refusal names a student, so it is
   * handed with its verdict to the router, which records it in the disclosure log (and, for an
   * enroll, reads or refuses the body itself).
   */
  function mayAnswer(
    request: IncomingMessage,
    verdict: Verdict,
    answerer: ProgressAnswer | EnrollAnswer,
    now: number,
  ): verdict is Verdict & { admitted: true } {
    if (verdict.admitted && answerer.admits(verdict.key, now)) return true
    handOver(request, { verdict })
    return false
  }

  /**
   * Writes the answer to a student request once `outcome` settles, or hands the request to the
   * router (`toRouter`, by default the verdict and `route`) when it settles to undefined.
   */
  function settle(
    request: IncomingMessage,
    response: ServerResponse,
    route: () => void,
    verdict: Verdict & { admitted: true },
    now: number,
    started: number,
    outcome: Promise<StudentOutcome>,
    template: string,
    toRouter = () => {
      handOver(request, { verdict })
      route()
    },
  ): void {
    const { key, rate } = verdict
    const written = outcome.then((outcome) => {
      if (outcome === undefined) return toRouter()
      const status =
        'body' in outcome
          ? sendJson(response, outcome.requestId, outcome.body, rate, now)
          : sendProblem(response, outcome.requestId, outcome.problem, rate, now)
      answered(request, outcome.requestId, status, started, key.keyId, template)
    })
    // As answerFast does for the synchronous part: a bug in writing ends this connection, not the process.
    written.catch(() => response.destroy())
  }

  /**
   * An admitted enroll (enroll.ts): the body is read here, then either answered once the
   * change is committed or, when it is not the plain case, given with the verdict to the router.
   */
  function answerEnroll(
    request: IncomingMessage,
    response: ServerResponse,
    route: () => void,
    id: string,
    verdict: Verdict & { admitted: true },
    now: number,
    started: number,
  ): void {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.once('end', () => {
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
      const toRouter = () => {
        handOver(request, { verdict, body })
        route()
      }
      // Outside answerFast's try: as there, a bug here ends this connection, not the process.
      try {
        const tier = plainTier(body)
        if (tier === undefined) return toRouter()
        // The change is dated when its body has arrived, as the route dates it.
        const outcome = enroll.answer(id, tier, verdict.key, clock.now())
        settle(request, response, route, verdict, now, started, outcome, ENROLL_ROUTE, toRouter)
      } catch {
        response.destroy()
      }
    })
  }

  /** After an answer is written: its access-log line and its count, as the router's onResponse hooks do. */
  function answered(
    request: IncomingMessage,
    requestId: string,
    status: number,
    started: number,
    keyId: string | undefined,
    template: string,
  ): void {
    if (requestsObserved()) recordRequest(template, request.method!, status, performance.now() - started)
    if (accessLog === undefined) return
    logAccess(accessLog, {
      reqId: requestId,
      method: request.method!,
      url: request.url!,
      status,
      elapsedMs: performance.now() - started,
      keyId,
    })
  }

  /** The student an exact enroll URL names, when the fast path reads this request's body; else undefined. */
  function enrolled(request: IncomingMessage): string | undefined {
    if (request.method !== 'POST') return undefined
    const id = enrollStudentId(request.url!)
    return id !== undefined && readsBody(request.headers) ? id : undefined
  }

  /** A POST: an enroll the fast path takes, or false. */
  function answerPost(request: IncomingMessage, response: ServerResponse, route: () => void): boolean {
    const id = enrolled(request)
    const address = request.socket.remoteAddress
    if (id === undefined || address === undefined) return false
    const started = startTime(accessLog)
    const now = clock.now()
    const verdict = admission.admit(address, request.headers.authorization, now)
    if (verdict === undefined || !mayAnswer(request, verdict, enroll, now)) return false
    answerEnroll(request, response, route, id, verdict, now, started)
    return true
  }

  return function fastPath(request, response, route) {
    if (request.method !== 'GET') return answerPost(request, response, route)
    const url = request.url!
    const representation = representationFor(url)
    const studentId = representation === undefined && progress !== undefined ? progressStudentId(url) : undefined
    if (representation === undefined && studentId === undefined) return false
    const headers = request.headers
    if (headers['content-length'] !== undefined || headers['transfer-encoding'] !== undefined) return false
    const address = request.socket.remoteAddress
    if (address === undefined) return false
    const started = startTime(accessLog)
    // A key that needs a storage lookup leaves the request to the router, nothing recorded.
    const now = clock.now()
    const verdict = admission.admit(address, headers.authorization, now)
    if (verdict === undefined) return false
    if (studentId !== undefined) {
      // A progress read (progress.ts): the answer comes once its disclosure is committed.
      if (!mayAnswer(request, verdict, progress!, now)) return false
      const outcome = progress!.answer(studentId, verdict.key, now)
      settle(request, response, route, verdict, now, started, outcome, PROGRESS_ROUTE)
      return true
    }
    if (representation === undefined) return false // (for the type: one of the two is set)
    const requestId = randomUUID()
    const template = url.startsWith(LESSON_PREFIX) ? LESSON_ROUTE : url === TIERS_URL ? TIERS_URL : LESSONS_URL
    if (!verdict.admitted) {
      const status = sendProblem(response, requestId, verdict.problem, verdict.rate, now)
      // A refusal after identification names the key, as the router's log line does.
      answered(request, requestId, status, started, verdict.key?.keyId, template)
      return true
    }
    const notModified = matchesIfNoneMatch(headers['if-none-match'], representation.etag)
    const out = headersFor(requestId, verdict.rate, now)
    out.etag = representation.etag
    out['cache-control'] = 'private, no-cache'
    if (notModified) {
      send(response, 304, out, NO_BODY)
    } else {
      out['content-type'] = 'application/json; charset=utf-8'
      out['content-length'] = representation.contentLength
      send(response, 200, out, representation.bytes)
    }
    answered(request, requestId, notModified ? 304 : 200, started, verdict.key.keyId, template)
    return true
  }
}
