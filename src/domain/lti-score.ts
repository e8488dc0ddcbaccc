/**
 * The score a progress change owes a platform's gradebook (Assignment and Grade Services 2.0,
 * the score service; docs/lti.md#grades-assignment-and-grade-services), and what an attempt to
 * send it means for the score: sent, tried again later, or failed.
 *
 * A lesson in progress is `InProgress` and `Pending`, without a score. A completed lesson is
 * `Completed` and `FullyGraded`, out of SCORE_MAXIMUM: the share of the lesson's quizzes answered
 * right at the first try when the change says how many, else the whole of it, since finishing a
 * lesson is what the tool asks of a learner.
 */
import type { ProgressStatus } from './progress.js'
import { RETRY_DELAYS_MS } from './webhook-events.js'

/** Every score is out of 100, as the line items deep linking makes say (`scoreMaximum`). */
export const SCORE_MAXIMUM = 100

/** What a score is made from: the progress entry's state and, once completed, how the quizzes went. */
export interface ScoreProgress {
  status: ProgressStatus
  /** The lesson's quizzes answered right at the first try, of how many it has. */
  quiz?: { right: number; total: number } | undefined
}

/** A score as AGS 2.0 defines it (media type `application/vnd.ims.lis.v1.score+json`). */
export interface AgsScore {
  userId: string
  activityProgress: 'InProgress' | 'Completed'
  gradingProgress: 'Pending' | 'FullyGraded'
  timestamp: string
  scoreGiven?: number
  scoreMaximum?: number
}

/**
 * The points a completed lesson is given out of SCORE_MAXIMUM, or undefined while in progress:
 * the quiz share rounded to a whole point when there were quizzes, else all of them.
 *
 * @example
 * scoreGiven({ status: 'completed', quiz: { right: 2, total: 3 } }) // 67
 * scoreGiven({ status: 'completed' }) // 100
 */
export function scoreGiven(progress: ScoreProgress): number | undefined {
  if (progress.status !== 'completed') return undefined
  const quiz = progress.quiz
  if (quiz === undefined || !(quiz.total > 0)) return SCORE_MAXIMUM
  const right = Math.min(Math.max(0, quiz.right), quiz.total)
  return Math.round((SCORE_MAXIMUM * right) / quiz.total)
}

/** The score for the platform's user `userId` (the launch's `sub`) at `timestamp` (ISO 8601). */
export function agsScore(userId: string, progress: ScoreProgress, timestamp: string): AgsScore {
  const given = scoreGiven(progress)
  if (given === undefined) return { userId, activityProgress: 'InProgress', gradingProgress: 'Pending', timestamp }
  return {
    userId,
    scoreGiven: given,
    scoreMaximum: SCORE_MAXIMUM,
    activityProgress: 'Completed',
    gradingProgress: 'FullyGraded',
    timestamp,
  }
}

/** How one attempt to send a score ended, as the sender saw it. */
export interface ScoreAttempt {
  /** Where it ended: getting an access token, or posting the score. */
  stage: 'token' | 'score'
  /** The HTTP status of the answer there; null when there was none (refused, unreachable, timed out). */
  status: number | null
  /** Why there was no answer, or a word on the answer. */
  error: string | null
  /** The start of the answer's body, at most MAX_ANSWER_KEPT characters. */
  response: string
}

export type ScoreVerdict = 'sent' | 'retry' | 'failed'

/** The most of a platform's answer kept with a score, for the operator to read. */
export const MAX_ANSWER_KEPT = 1024

/**
 * A 2xx from the score endpoint sends the score. A 4xx there refuses it for good (the platform
 * read it and said no; a 401 reaches here only after a fresh token was refused too), except 408
 * and 429, which ask to try later, as 5xx and no answer do. A token that cannot be had is tried
 * again on the schedule whatever the answer: what fixes it (the platform fetching our key set, an
 * operator correcting the registration) happens outside the score.
 */
export function scoreVerdict(attempt: ScoreAttempt): ScoreVerdict {
  const status = attempt.status
  if (attempt.stage === 'token' || status === null) return 'retry'
  if (status >= 200 && status < 300) return 'sent'
  if (status === 408 || status === 429 || status >= 500) return 'retry'
  return 'failed'
}

/**
 * Whether the platform has the score after this attempt, so that it is a disclosure: the score
 * endpoint answered with anything but 401 (a refused token, before the score is read).
 */
export function platformGotScore(attempt: ScoreAttempt): boolean {
  return attempt.stage === 'score' && attempt.status !== null && attempt.status !== 401
}

/**
 * When the attempt after `attempts` failed ones is due (the webhooks' schedule: 5 s, 5 min, 30
 * min, 2 h, 5 h, 10 h, 10 h), or null when none is left and the score has failed.
 */
export function nextScoreAttemptAt(attempts: number, failedAt: number): number | null {
  const delay = RETRY_DELAYS_MS[attempts - 1]
  return delay === undefined ? null : failedAt + delay
}

/** Attempts a score gets before it has failed. */
export const MAX_SCORE_ATTEMPTS = RETRY_DELAYS_MS.length + 1

/** A line item's scores endpoint: `/scores` after its path, before any query (AGS 2.0, 3.4). */
export function scoresUrl(lineItemUrl: string): string {
  const query = lineItemUrl.indexOf('?')
  const path = query === -1 ? lineItemUrl : lineItemUrl.slice(0, query)
  const rest = query === -1 ? '' : lineItemUrl.slice(query)
  return `${path.replace(/\/+$/, '')}/scores${rest}`
}
