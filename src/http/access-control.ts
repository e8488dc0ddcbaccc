/**
 * The /api/v1 plugin's access checks, written for the router (see admission.ts for the decision
 * itself).
 *
 * `createAuthentication`: the plugin's onRequest hook. It answers refusals itself and leaves
 * `request.principal` set to the admitted key.
 *
 * `requireScope` (a route-level onRequest hook on the student routes): the scope and an active
 * data-sharing agreement on the key's organisation, otherwise 403.
 *
 * Every refusal after the key is identified, on a route that names a student, is written to
 * the disclosure log (refusal-disclosures.ts) before the answer.
 *
 * This is the hot path of every request: refusals are sent directly (no exception, whose stack
 * trace would cost more than the rest of the request).
 */
import type { IncomingMessage } from 'node:http'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Clock } from '../clock.js'
import { hasScope, type Scope } from '../domain/scopes.js'
import { mayReachStudents } from '../domain/student-reach.js'
import { type Problem, ProblemError } from '../errors.js'
import type { KeyRecord } from '../domain/api-key.js'
import type { WriteQueue } from '../storage/write-queue.js'
import { activeSpans, type Spans } from '../instrumentation/spans.js'
import { Admission, type AdmissionOptions, AUTH_FAILURES, REALM, type MaybePromise, type Verdict } from './admission.js'
import { sendProblem } from './problem-responses.js'
import { addKeySunset } from './key-sunset-headers.js'
import { rateLimitHeaders } from './rate-limit-headers.js'
import { recordRefusal } from './refusal-disclosures.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The identified key: set for every /api/v1 request that reaches a handler. */
    principal: KeyRecord | null
  }
}

export interface AccessControlOptions extends AdmissionOptions {
  /** The RateLimit-Policy field. */
  policy: string
  /** Where refusals on student routes are recorded. */
  writes: WriteQueue
  /** The verdict already taken for a request by whatever looked at it before the router (app.ts), taken once. */
  decided?: (request: IncomingMessage) => Verdict | undefined
}

export function createAuthentication(options: AccessControlOptions) {
  const admit = admitter(new Admission(options), activeSpans())
  const { clock, policy, decided, usage } = options

  return async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    request.principal = null
    // A CORS preflight never carries credentials (Fetch standard); response-basics answers it
    // on every route, and the not-found handler answers it 404.
    if (request.method === 'OPTIONS') return undefined
    // The decision may have been taken already, and the rest left to the router.
    const verdict = decided?.(request.raw) ?? (await admit(request.ip, request.headers.authorization))
    if (verdict.rate !== undefined) {
      const headers = rateLimitHeaders(verdict.rate, policy, clock.now())
      addKeySunset(verdict.key, headers)
      reply.headers(headers)
    }
    // Set on refusals after identification too, for the access log; a refused request never
    // reaches a handler.
    request.principal = verdict.key ?? null
    if (verdict.key !== undefined) usage.noteClient(verdict.key.keyId, request.ip, request.headers['user-agent'])
    if (verdict.admitted) return undefined
    if (verdict.key !== undefined) await recordRefusal(request, verdict.key, verdict.problem.code, options)
    return sendProblem(request, reply, verdict.problem)
  }
}

type Admit = (address: string, authorization: string | undefined) => MaybePromise<Verdict>

/**
 * `admission.admit`, inside an `admission` span that names its outcome when tracing is on; the
 * plain method otherwise, so that an untraced request calls nothing more.
 */
function admitter(admission: Admission, spans: Spans | undefined): Admit {
  if (spans === undefined) return (address, authorization) => admission.admit(address, authorization)
  return (address, authorization) =>
    spans.run('admission', {}, (notes) => {
      const note = (verdict: Verdict) => {
        notes.set('admission.outcome', verdict.admitted ? 'admitted' : verdict.problem.code)
        return verdict
      }
      const verdict = admission.admit(address, authorization)
      return verdict instanceof Promise ? verdict.then(note) : note(verdict)
    })
}

/**
 * The key that authentication admitted. The hook makes a null principal impossible in a
 * handler; should a future change break that, the request is refused, never served.
 */
export function principalOf(request: FastifyRequest): KeyRecord {
  const principal = request.principal
  if (principal === null)
    throw new ProblemError(AUTH_FAILURES.api_key_missing.code, AUTH_FAILURES.api_key_missing.detail, {
      headers: AUTH_FAILURES.api_key_missing.headers,
    })
  return principal
}

/** A route-level hook: the key needs what `mayReachStudents` (domain/student-reach.ts) says, otherwise 403. */
export function requireScope(scope: Scope, options: { writes: WriteQueue; clock: Clock }) {
  const missingScope: Problem = {
    code: 'insufficient_scope',
    detail: `This endpoint needs an API key with the scope "${scope}".`,
    headers: { 'www-authenticate': `Bearer realm="${REALM}", error="insufficient_scope", scope="${scope}"` },
  }
  const noAgreement: Problem = {
    code: 'agreement_required',
    detail:
      'Student data needs an active signed data-sharing agreement on your organisation; ' +
      'none is in force. Contact the operator.',
  }
  return async function checkScope(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const record = request.principal
    // Unreachable (authentication runs first and admits only with a key); refuse, never serve.
    if (record === null) return sendProblem(request, reply, AUTH_FAILURES.api_key_missing)
    if (mayReachStudents(record, scope, options.clock.now())) return undefined
    const problem = hasScope(record.scopes, scope) ? noAgreement : missingScope
    await recordRefusal(request, record, problem.code, options)
    return sendProblem(request, reply, problem)
  }
}
