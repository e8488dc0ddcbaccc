/**
 * Scores for platforms' gradebooks (Assignment and Grade Services; docs/lti.md#grades-assignment-and-grade-services).
 * A progress change of an LTI student queues one score per resource link of the lesson at a
 * registration that knows the student (`queueScores`, in the change's transaction: an outbox, as
 * the webhooks'), with the change's time as its timestamp, which only increases per target
 * (registration, resource link, student): an older or equal change queues nothing, and a newer
 * one cancels the target's scores still waiting, so the gradebook gets the latest.
 *
 * The sender (services/lti-score-sender.ts) claims due scores here under a lease (`claimScores`);
 * a claimed score goes only while its registration is active and its organisation may have the
 * student's data (not suspended, an agreement in force, the student linked), checked at every
 * claim: otherwise it is cancelled, and a refusal for want of access is a disclosure row, as a
 * webhook's is. Each attempt is recorded here (`recordScoreAttempt`): the first one the platform
 * got writes the score's one disclosure row (`lti.score`, key `lti:<registration id>`, request
 * the score's id). A failed score can be sent again by an operator, audited (`sendScoreAgain`).
 */
import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import { ConflictError, NotFoundError } from '../domain/errors.js'
import {
  agsScore,
  MAX_ANSWER_KEPT,
  nextScoreAttemptAt,
  platformGotScore,
  type ScoreAttempt,
  scoreVerdict,
} from '../domain/lti-score.js'
import type { ProgressEntry, ProgressStatus } from '../domain/progress.js'
import { REFUSAL_REASONS } from '../domain/webhook-events.js'
import { lessonBySlug } from '../storage/catalog-repository.js'
import { type DisclosureContext, recordDisclosure } from '../storage/disclosure-log.js'
import {
  type ClaimedScore,
  cancelWaitingScores,
  claimedScores,
  endClaimedScore,
  insertScore,
  latestScoreTimestamp,
  leaseDueScores,
  markFirstSent,
  recordScoreOutcome,
  requeueFailedScore,
  scoreById,
  scoreDestinations,
} from '../storage/lti-score-repository.js'
import type { Database } from '../storage/tables.js'
import { inTransaction } from '../storage/transaction.js'
import { auditOperator, type OperatorAudit } from './operator-action.js'

type Db = Kysely<Database>

/** A progress change of a student's lesson, as cases/lti-progress.ts makes it. */
export interface LtiProgressChange {
  studentId: string
  /** The lesson's slug (`tier/lesson`), as the progress row and the resource links name it. */
  lessonSlug: string
  status: ProgressStatus
  /** When the change happened (epoch ms): the score's timestamp, and when it is queued. */
  at: number
  /**
   * The lesson's quizzes answered right at the first try, of how many it has: a completed
   * lesson's score is that share (domain/lti-score.ts); without it, the whole of it.
   */
  quiz?: { right: number; total: number } | undefined
}

/** What the last error of a score says when a newer one replaced it. */
export const SUPERSEDED = 'a newer score of the same student and resource link replaced it'
export const REGISTRATION_INACTIVE = 'the LTI registration is not active'
export const NO_LINE_ITEM = 'the resource link has no line item to score'

/** The disclosure context of a score: the platform, through its registration, and the score's id. */
function disclosureContext(score: Pick<ClaimedScore, 'id' | 'registration_id' | 'organisation_id'>, now: number) {
  const context: DisclosureContext = {
    at: now,
    requestId: score.id,
    keyId: `lti:${score.registration_id}`,
    organisationId: score.organisation_id,
  }
  return context
}

/**
 * The change a step of the lesson player made (cases/lti-progress.ts), as `queueScores` takes it:
 * a completed lesson carries how its quizzes went, the first answers right (`firstTries`, kept by
 * the player per quiz slide) of the quizzes the lesson has.
 */
export async function playerChange(
  db: Db,
  lesson: { studentId: string; lessonSlug: string },
  entry: Pick<ProgressEntry, 'status'>,
  firstTries: Readonly<Record<number, boolean>>,
  at: number,
): Promise<LtiProgressChange> {
  const change: LtiProgressChange = { ...lesson, status: entry.status, at }
  if (entry.status !== 'completed') return change
  const row = await lessonBySlug(db, lesson.lessonSlug)
  const slides = row === undefined ? [] : (JSON.parse(row.slides) as { type: string }[])
  const quizzes = new Set(slides.flatMap((slide, index) => (slide.type === 'quiz' ? [index] : [])))
  if (quizzes.size === 0) return change
  const right = Object.entries(firstTries).filter(([index, ok]) => ok && quizzes.has(Number(index))).length
  return { ...change, quiz: { right, total: quizzes.size } }
}

/**
 * Queues the scores `change` owes, inside the change's transaction `trx`; resolves to how many.
 * A target whose newest score is as new as the change or newer gets none.
 */
export async function queueScores(trx: Db, change: LtiProgressChange): Promise<number> {
  if (!trx.isTransaction) throw new Error('queueScores must run inside the transaction of the progress change')
  const timestamp = isoAt(change.at)
  let queued = 0
  for (const destination of await scoreDestinations(trx, change.studentId, change.lessonSlug)) {
    const latest = await latestScoreTimestamp(trx, destination)
    if (latest !== undefined && latest >= timestamp) continue
    await cancelWaitingScores(trx, destination, SUPERSEDED, change.at)
    await insertScore(trx, {
      ...destination,
      id: randomUUID(),
      lessonSlug: change.lessonSlug,
      payload: JSON.stringify(agsScore(destination.sub, change, timestamp)),
      timestamp,
      createdAt: timestamp,
    })
    queued++
  }
  return queued
}

/** A claimed score that may go: where, and with what. */
export type DueScore = ClaimedScore & { line_item_url: string }

/** A claim's scores: those to send now, and how many were claimed in all (those ended here too). */
export interface ScoreClaim {
  due: DueScore[]
  claimed: number
}

/**
 * Claims up to `limit` due scores for `leaseMs`; of those, the ones that may be sent now are
 * `due`, and the rest end here: cancelled (the registration not active, a newer score queued, or
 * access ended, which is disclosed as a refusal) or failed (no line item to score).
 */
export function claimScores(db: Db, now: number, leaseMs: number, limit: number): Promise<ScoreClaim> {
  return inTransaction(db, async (trx) => {
    const ids = await leaseDueScores(trx, { now, leaseMs, limit })
    const due: DueScore[] = []
    for (const score of await claimedScores(trx, ids, now)) {
      if (score.registration_status !== 'active') await endClaimedScore(trx, score, 'cancelled', REGISTRATION_INACTIVE)
      else if (score.superseded) await endClaimedScore(trx, score, 'cancelled', SUPERSEDED)
      else if (score.refusal !== null) {
        await endClaimedScore(trx, score, 'cancelled', REFUSAL_REASONS[score.refusal])
        await recordDisclosure(trx, disclosureContext(score, now), score.student_id, 'lti.score', score.refusal)
      } else if (score.line_item_url === null) await endClaimedScore(trx, score, 'failed', NO_LINE_ITEM)
      else due.push({ ...score, line_item_url: score.line_item_url })
    }
    return { due, claimed: ids.length }
  })
}

/** What recording an attempt came to. */
export interface RecordedAttempt {
  state: 'pending' | 'sent' | 'failed'
  /** False when the claim no longer held the score (cancelled, sent again or erased meanwhile). */
  recorded: boolean
}

/**
 * Records an attempt at a claimed score. The first attempt the platform got writes the score's
 * disclosure row (`disclosed` on a 2xx, `sent_unacknowledged` otherwise: it may have kept it),
 * whether or not the claim still holds the score. Then, if it does: sent; due again on the
 * schedule; or failed, after a refusal or the last attempt, with the platform's answer kept.
 */
export function recordScoreAttempt(
  db: Db,
  score: DueScore,
  attempt: ScoreAttempt,
  now: number,
): Promise<RecordedAttempt> {
  return inTransaction(db, async (trx) => {
    const verdict = scoreVerdict(attempt)
    if (platformGotScore(attempt) && (await markFirstSent(trx, score.id, now)))
      await recordDisclosure(
        trx,
        disclosureContext(score, now),
        score.student_id,
        'lti.score',
        verdict === 'sent' ? 'disclosed' : 'sent_unacknowledged',
      )
    const attempts = score.attempts + 1
    const next = verdict === 'retry' ? nextScoreAttemptAt(attempts, now) : null
    const state = verdict === 'sent' ? 'sent' : next === null ? 'failed' : 'pending'
    const recorded = await recordScoreOutcome(
      trx,
      score,
      {
        state,
        attempts,
        nextAttemptAt: next,
        status: attempt.status,
        error: attempt.error,
        response: attempt.response === '' ? null : attempt.response.slice(0, MAX_ANSWER_KEPT),
        sentAt: verdict === 'sent' ? now : null,
      },
      now,
    )
    return { state, recorded }
  })
}

/** Puts a failed score back in the queue, due now; audited as `lti.score.resend`. */
export function sendScoreAgain(db: Db, id: string, now: number, audit: OperatorAudit): Promise<void> {
  return inTransaction(db, async (trx) => {
    const score = await scoreById(trx, id)
    if (score === undefined) throw new NotFoundError(`no score ${id}`)
    if (!(await requeueFailedScore(trx, id, now)))
      throw new ConflictError(`the score ${id} is ${score.state}: only a failed score is sent again`)
    const detail = { registrationId: score.registration_id, resourceLinkId: score.resource_link_id }
    await auditOperator(trx, audit, { action: 'lti.score.resend', target: `lti-score:${id}`, detail }, now)
  })
}
