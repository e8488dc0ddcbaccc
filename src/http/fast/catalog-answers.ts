/** The catalog's exact URLs, answered from the bytes and ETags computed once per import. */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { requestIdAt } from '../../domain/request-id.js'
import { isStandardReference } from '../../domain/standard-reference.js'
import { TIER_IDS } from '../../domain/tiers.js'
import { API_PREFIX } from '../api-prefix.js'
import type { Verdict } from '../admission.js'
import type { ByteString } from '../byte-string.js'
import { matchesIfNoneMatch, type Representation } from '../catalog-representations.js'
import type { FastPathContext } from './context.js'
import { answered, headersFor, send, sendProblem } from './replies.js'

/** The body of an answer that has none (a 304). */
const NO_BODY = '' as ByteString

export const TIERS_URL = `${API_PREFIX}/tiers`
export const LESSONS_URL = `${API_PREFIX}/lessons`
const LESSONS_BY_TIER = new Map(TIER_IDS.map((tier) => [`${LESSONS_URL}?tier=${tier}`, tier]))
const LESSON_PREFIX = `${LESSONS_URL}/`
const BY_STANDARD = `${LESSONS_URL}?standard=`
/** The router's template for a lesson, so that both paths count under one name. */
export const LESSON_ROUTE = `${LESSON_PREFIX}*`

/** What an exact catalog URL answers; undefined for any other URL. */
export function representationFor(context: FastPathContext, url: string): Representation | undefined {
  const current = context.catalog.current
  if (url === TIERS_URL) return current.tiers
  if (url === LESSONS_URL) return current.lessons
  if (url.startsWith(LESSON_PREFIX)) return current.lessonBySlug.get(url.slice(LESSON_PREFIX.length))
  if (url.startsWith(BY_STANDARD)) {
    // Only a key as the catalog holds it, whose characters all stand for themselves: any other
    // spelling (another case of an identifier, an escape, a second parameter) is the router's.
    const key = url.slice(BY_STANDARD.length)
    return isStandardReference(key) ? current.lessonsByStandard.get(key)?.all : undefined
  }
  const tier = LESSONS_BY_TIER.get(url)
  return tier === undefined ? undefined : current.lessonsByTier.get(tier)
}

/** Answers a catalog GET once admission has decided: its refusal, a 304, or the representation. */
export function answerCatalog(
  context: FastPathContext,
  request: IncomingMessage,
  response: ServerResponse,
  representation: Representation,
  verdict: Verdict,
  now: number,
  started: number,
): void {
  const url = request.url!
  const requestId = requestIdAt(now)
  const template = url.startsWith(LESSON_PREFIX) ? LESSON_ROUTE : url === TIERS_URL ? TIERS_URL : LESSONS_URL
  if (!verdict.admitted) {
    const status = sendProblem(context, response, requestId, verdict.problem, verdict.rate, now, verdict.key)
    // A refusal after identification names the key, as the router's log line does.
    answered(context, request, requestId, status, started, verdict.key, template, verdict.problem.code)
    return
  }
  const notModified = matchesIfNoneMatch(request.headers['if-none-match'], representation.etag)
  const out = headersFor(context, requestId, verdict.rate, now, verdict.key)
  out.etag = representation.etag
  out['cache-control'] = 'private, no-cache'
  if (notModified) {
    send(response, 304, out, NO_BODY)
  } else {
    out['content-type'] = 'application/json; charset=utf-8'
    out['content-length'] = representation.contentLength
    send(response, 200, out, representation.bytes)
  }
  answered(context, request, requestId, notModified ? 304 : 200, started, verdict.key, template, undefined)
}
