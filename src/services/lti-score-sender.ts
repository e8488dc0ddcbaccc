/**
 * Sends the scores LTI progress queued to the platforms' gradebooks (the rules are
 * cases/lti-scores.ts's; docs/lti.md#grades-assignment-and-grade-services). Every instance runs
 * one: a run claims due scores a few at a time under a lease, gets each registration's access
 * token (kept until shortly before it expires, so scores sent together share one), posts each
 * score, and records what came of it, until none is due. A 401 from the score endpoint drops the
 * token and tries once more with a new one. The server's timer drives it; tests call `run`.
 * Logs name scores and registrations by id, never the platform's user.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import { claimScores, type DueScore, recordScoreAttempt } from '../cases/lti-scores.js'
import type { Clock } from '../clock.js'
import { AGS_SCOPE } from '../domain/lti-claims.js'
import type { ScoreAttempt } from '../domain/lti-score.js'
import { AccessTokens } from '../platforms/access-tokens.js'
import { type PlatformSettings, postScore, requestAccessToken, type TokenEndpoint } from '../platforms/ags-client.js'
import type { Database } from '../storage/tables.js'
import type { ToolKeys } from './lti-tool-keys.js'
import { PeriodicTask } from './periodic-task.js'

/** How often each instance looks for due scores. */
export const SCORE_POLL_MS = 1000

/** Scores one instance sends at once. */
export const SCORE_CONCURRENCY = 8

/** Deadline of each request to a platform. */
export const SCORE_TIMEOUT_MS = 10_000

/**
 * How long a claimed score is its claimer's: an attempt makes at most four requests (a token, the
 * score, and again after a 401), then records its outcome; a lease runs out only when its process
 * stopped or stalled, and the score is then sent again (a platform keeps the newest timestamp).
 */
export function scoreLeaseMs(timeoutMs: number): number {
  return 4 * timeoutMs + 10_000
}

export interface ScoreSenderOptions {
  db: Kysely<Database>
  clock: Clock
  log: FastifyBaseLogger
  toolKeys: ToolKeys
  /** LTI_ALLOW_LOOPBACK: platforms on this machine over plain http (development and tests). */
  allowLoopback: boolean
  /** SCORE_TIMEOUT_MS by default. */
  timeoutMs?: number
  /** SCORE_CONCURRENCY by default. */
  concurrency?: number
  /** Name resolution (tests substitute it). */
  resolve?: PlatformSettings['resolve']
}

/** The token request of a claimed score's registration: the AGS scopes it was granted, the score's at least. */
function tokenEndpoint(score: DueScore): TokenEndpoint {
  const granted = score.scopes
    .split(' ')
    .filter((scope) => scope.startsWith('https://purl.imsglobal.org/spec/lti-ags/'))
  return {
    tokenUrl: score.token_url,
    tokenAudience: score.token_audience,
    clientId: score.client_id,
    scope: (granted.includes(AGS_SCOPE.score) ? granted : [...granted, AGS_SCOPE.score]).join(' '),
  }
}

/** `run()` resolves to how many attempts it made. */
export class LtiScoreSender extends PeriodicTask {
  readonly tokens: AccessTokens

  constructor(options: ScoreSenderOptions) {
    const { db, clock, log, toolKeys } = options
    const timeoutMs = options.timeoutMs ?? SCORE_TIMEOUT_MS
    const concurrency = options.concurrency ?? SCORE_CONCURRENCY
    const leaseMs = scoreLeaseMs(timeoutMs)
    let stopping: AbortSignal | undefined
    const settings = (): PlatformSettings => ({
      timeoutMs,
      allowLoopback: options.allowLoopback,
      ...(options.resolve === undefined ? {} : { resolve: options.resolve }),
      ...(stopping === undefined ? {} : { stopping }),
    })
    const tokens = new AccessTokens(
      async (endpoint) => requestAccessToken(endpoint, await toolKeys.current(), clock.now(), settings()),
      clock,
    )

    const send = async (score: DueScore): Promise<ScoreAttempt> => {
      const endpoint = tokenEndpoint(score)
      for (let tries = 1; ; tries++) {
        const token = await tokens.get(score.registration_id, endpoint)
        if (!token.ok) return { stage: 'token', status: token.status, error: token.error, response: token.response }
        const answer = await postScore(score.line_item_url, token.token, score.payload, settings())
        if (answer.status !== 401 || tries === 2) return { stage: 'score', ...answer }
        // Expired or revoked before we thought: one new token, one more try.
        await tokens.drop(score.registration_id, token.token)
      }
    }

    const attempt = async (score: DueScore) => {
      const ids = { scoreId: score.id, registrationId: score.registration_id, attempt: score.attempts + 1 }
      let sent: ScoreAttempt
      try {
        sent = await send(score)
      } catch (err) {
        sent = { stage: 'token', status: null, error: String(err), response: '' }
      }
      try {
        const record = await recordScoreAttempt(db, score, sent, clock.now())
        const detail = { stage: sent.stage, status: sent.status, error: sent.error }
        if (!record.recorded)
          log.info({ score: ids, detail }, 'score attempt not recorded: the score changed meanwhile')
        else if (record.state === 'sent') log.info({ score: ids }, 'score sent')
        else if (record.state === 'pending') log.warn({ score: ids, detail }, 'score not sent: tried again later')
        else log.warn({ score: ids, detail }, 'score failed')
      } catch (err) {
        // Its lease runs out and it is sent again: the platform keeps the newest timestamp.
        log.warn({ err, score: ids }, 'could not record a score attempt')
      }
    }

    const work = async (signal: AbortSignal) => {
      stopping = signal
      let attempts = 0
      while (!signal.aborted) {
        const { due, claimed } = await claimScores(db, clock.now(), leaseMs, concurrency)
        if (claimed === 0) break
        await Promise.all(due.map(attempt))
        attempts += due.length
      }
      return attempts
    }
    super(work, log, 'could not send LTI scores')
    this.tokens = tokens
  }
}
