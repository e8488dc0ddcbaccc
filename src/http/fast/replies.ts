/**
 * Writing the fast path's answers with Node's public API, with the headers the router sends
 * (response-basics.ts, rate-limit-headers.ts), and after each its access-log line, its count and its
 * request-log entry, as the router's onResponse hooks do.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { KeyRecord } from '../../domain/api-key.js'
import { PROBLEM_CATALOG, type Problem } from '../../errors.js'
import { recordProblem, recordRequest, requestsObserved } from '../../instrumentation/metrics-channels.js'
import { logAccess } from '../access-log.js'
import { addKeySunset } from '../key-sunset-headers.js'
import type { ByteString } from '../byte-string.js'
import { type RateState, rateLimitHeaders } from '../rate-limit-headers.js'
import { EXPOSED_HEADERS } from '../response-basics.js'
import type { FastPathContext } from './context.js'
import { problemBytes } from './problem-bytes.js'

const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8'

/** When a request started, if anything (the access log, the request log, the request metrics) needs it. */
export function startTime(context: Pick<FastPathContext, 'accessLog' | 'requestLog'>): number {
  return context.accessLog === undefined && context.requestLog === undefined && !requestsObserved()
    ? 0
    : performance.now()
}

/** Sends a whole answer; `body` goes out as the bytes it holds. */
export function send(
  response: ServerResponse,
  status: number,
  headers: Record<string, string>,
  body: ByteString,
): void {
  response.writeHead(status, headers)
  response.end(body, 'latin1')
}

/** What every answer carries, and the limits (and a rolled key's end) when a key was identified. */
export function headersFor(
  context: FastPathContext,
  requestId: string,
  rate: RateState | undefined,
  now: number,
  key?: KeyRecord,
): Record<string, string> {
  const basics: Record<string, string> = {
    'x-request-id': requestId,
    'access-control-allow-origin': '*',
    'access-control-expose-headers': EXPOSED_HEADERS,
  }
  if (rate === undefined) return basics
  rateLimitHeaders(rate, context.policy, now, basics)
  addKeySunset(key, basics)
  return basics
}

export function sendProblem(
  context: FastPathContext,
  response: ServerResponse,
  requestId: string,
  problem: Problem,
  rate: RateState | undefined,
  now: number,
  key?: KeyRecord,
): number {
  const body = problemBytes(problem, requestId)
  const headers = headersFor(context, requestId, rate, now, key)
  if (problem.headers !== undefined) Object.assign(headers, problem.headers)
  headers['content-type'] = PROBLEM_CONTENT_TYPE
  headers['content-length'] = String(body.length)
  const status = PROBLEM_CATALOG[problem.code].status
  send(response, status, headers, body)
  recordProblem(problem.code, status)
  return status
}

export function sendJson(
  context: FastPathContext,
  response: ServerResponse,
  requestId: string,
  body: ByteString,
  rate: RateState,
  now: number,
  key?: KeyRecord,
): number {
  const out = headersFor(context, requestId, rate, now, key)
  out['content-type'] = 'application/json; charset=utf-8'
  out['content-length'] = String(body.length)
  send(response, 200, out, body)
  return 200
}

/**
 * After an answer is written: its access-log line, its count under the router's `template`, and
 * its request-log entry when a key was identified (`problem`: the code of a problem answer).
 */
export function answered(
  context: FastPathContext,
  request: IncomingMessage,
  requestId: string,
  status: number,
  started: number,
  key: KeyRecord | undefined,
  template: string,
  problem: string | undefined,
): void {
  if (started === 0) return
  const elapsedMs = performance.now() - started
  if (requestsObserved()) recordRequest(template, request.method!, status, elapsedMs)
  if (key !== undefined)
    context.requestLog?.record(key, request.method!, template, status, problem, elapsedMs, requestId, address(request))
  const accessLog = context.accessLog
  if (accessLog === undefined) return
  logAccess(accessLog, {
    reqId: requestId,
    method: request.method!,
    url: request.url!,
    status,
    elapsedMs,
    keyId: key?.keyId,
  })
}

/** The client's address as the router's `request.ip` gives it (the fast path is off behind a proxy). */
function address(request: IncomingMessage): string {
  return request.socket.remoteAddress ?? ''
}
