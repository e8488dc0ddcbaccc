/**
 * The fast path's two student requests, a progress read (progress.ts) and an enroll (enroll.ts):
 * admitted and answered once storage has committed, or handed to the router (hand-over.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { API_PREFIX } from '../api-prefix.js'
import type { Verdict } from '../admission.js'
import type { FastPathContext } from './context.js'
import { type EnrollAnswer, enrollStudentId, plainTier, readsBody } from './enroll.js'
import { handOver } from './hand-over.js'
import type { ProgressAnswer } from './progress.js'
import { answered, sendJson, sendProblem, startTime } from './replies.js'
import type { StudentOutcome } from './student-answers.js'

/** The router's templates, so that both paths count under one name. */
export const PROGRESS_ROUTE = `${API_PREFIX}/students/:id/progress`
export const ENROLL_ROUTE = `${API_PREFIX}/students/:id/enroll`

type Admitted = Verdict & { admitted: true }

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
): verdict is Admitted {
  if (verdict.admitted && answerer.admits(verdict.key, now)) return true
  handOver(request, { verdict })
  return false
}

/**
 * Writes the answer to a student request once `outcome` settles, or hands the request to the
 * router (`toRouter`, by default the verdict and `route`) when it settles to undefined.
 */
function settle(
  context: FastPathContext,
  request: IncomingMessage,
  response: ServerResponse,
  route: () => void,
  verdict: Admitted,
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
        ? sendJson(context, response, outcome.requestId, outcome.body, rate, now, key)
        : sendProblem(context, response, outcome.requestId, outcome.problem, rate, now, key)
    const problem = 'problem' in outcome ? outcome.problem.code : undefined
    answered(context, request, outcome.requestId, status, started, key, template, problem)
  })
  // As app.ts's answerFast does for the synchronous part: a bug in writing ends this connection, not the process.
  written.catch(() => response.destroy())
}

/** A progress read (progress.ts) once admitted, or false: the answer comes once its disclosure is committed. */
export function answerProgress(
  context: FastPathContext,
  progress: ProgressAnswer,
  request: IncomingMessage,
  response: ServerResponse,
  route: () => void,
  studentId: string,
  verdict: Verdict,
  now: number,
  started: number,
): boolean {
  if (!mayAnswer(request, verdict, progress, now)) return false
  const outcome = progress.answer(studentId, verdict.key, now)
  settle(context, request, response, route, verdict, now, started, outcome, PROGRESS_ROUTE)
  return true
}

/** The student an exact enroll URL names, when the fast path reads this request's body; else undefined. */
function enrolled(request: IncomingMessage): string | undefined {
  if (request.method !== 'POST') return undefined
  const id = enrollStudentId(request.url!)
  return id !== undefined && readsBody(request.headers) ? id : undefined
}

/**
 * A POST: an enroll the fast path takes (enroll.ts), or false. Once admitted, the body is read
 * here, then either answered once the change is committed or, when it is not the plain case,
 * given with the verdict to the router.
 */
export function answerPost(
  context: FastPathContext,
  request: IncomingMessage,
  response: ServerResponse,
  route: () => void,
): boolean {
  const id = enrolled(request)
  const address = request.socket.remoteAddress
  if (id === undefined || address === undefined) return false
  const started = startTime(context)
  const now = context.clock.now()
  const verdict = context.admission.admit(address, request.headers.authorization, now, request.headers['user-agent'])
  if (verdict === undefined || !mayAnswer(request, verdict, context.enroll, now)) return false
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
      const outcome = context.enroll.answer(id, tier, verdict.key, context.clock.now())
      settle(context, request, response, route, verdict, now, started, outcome, ENROLL_ROUTE, toRouter)
    } catch {
      response.destroy()
    }
  })
  return true
}
