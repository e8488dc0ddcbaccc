/**
 * The outbox of scores owed to platforms' gradebooks (migration 0028; the rules are
 * cases/lti-scores.ts's): where a student's progress in a lesson goes, queueing a score in the
 * progress change's transaction, claiming due scores under a lease (so one instance sends each at
 * a time), recording attempts, and the operator's listing. A score's target is its registration,
 * resource link and student: its timestamps only increase there.
 */
import { type ExpressionBuilder, type Kysely, type RawBuilder, sql } from 'kysely'
import { isoAt } from '../clock.js'
import type { DeliveryRefusal } from '../domain/webhook-events.js'
import type { Database, LtiRegistrationStatus, LtiScoreRow, LtiScoreState } from './tables.js'

type Db = Kysely<Database>

/** Where one score goes: a resource link of the lesson at a registration that knows the student. */
export interface ScoreTarget {
  registrationId: string
  resourceLinkId: string
  studentId: string
}

export interface ScoreDestination extends ScoreTarget {
  /** The student's `sub` at the registration: the score's `userId`. */
  sub: string
}

/**
 * The resource links of `lessonSlug` that carry a line item, at active registrations where the
 * student has a `sub`: one score each.
 */
export async function scoreDestinations(db: Db, studentId: string, lessonSlug: string): Promise<ScoreDestination[]> {
  const rows = await db
    .selectFrom('lti_students as s')
    .innerJoin('lti_resource_links as l', 'l.registration_id', 's.registration_id')
    .innerJoin('lti_registrations as r', 'r.id', 's.registration_id')
    .select(['s.registration_id', 's.sub', 'l.resource_link_id'])
    .where('s.student_id', '=', studentId)
    .where('l.lesson_slug', '=', lessonSlug)
    .where('l.line_item_url', 'is not', null)
    .where('r.status', '=', 'active')
    .orderBy('s.registration_id')
    .orderBy('l.resource_link_id')
    .execute()
  return rows.map((row) => ({
    registrationId: row.registration_id,
    resourceLinkId: row.resource_link_id,
    studentId,
    sub: row.sub,
  }))
}

/** The scores of one target. */
function ofTarget(target: ScoreTarget) {
  return (eb: ExpressionBuilder<Database, 'lti_scores'>) =>
    eb.and([
      eb('registration_id', '=', target.registrationId),
      eb('resource_link_id', '=', target.resourceLinkId),
      eb('student_id', '=', target.studentId),
    ])
}

/** The newest timestamp of any score queued for the target, sent or not; undefined before the first. */
export async function latestScoreTimestamp(db: Db, target: ScoreTarget): Promise<string | undefined> {
  const row = await db
    .selectFrom('lti_scores')
    .select((eb) => eb.fn.max('timestamp').as('latest'))
    .where(ofTarget(target))
    .executeTakeFirst()
  return row?.latest ?? undefined
}

/**
 * Cancels the target's pending scores that no instance is sending now (a lease in force): a newer
 * one replaces them. Resolves to how many.
 */
export async function cancelWaitingScores(trx: Db, target: ScoreTarget, reason: string, now: number) {
  const at = isoAt(now)
  const result = await trx
    .updateTable('lti_scores')
    .set({ state: 'cancelled', next_attempt_at: null, last_error: reason })
    .where(ofTarget(target))
    .where('state', '=', 'pending')
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', at)]))
    .executeTakeFirst()
  return Number(result.numUpdatedRows)
}

export interface NewScore extends ScoreTarget {
  id: string
  lessonSlug: string
  payload: string
  timestamp: string
  createdAt: string
}

export async function insertScore(trx: Db, score: NewScore): Promise<void> {
  await trx
    .insertInto('lti_scores')
    .values({
      id: score.id,
      registration_id: score.registrationId,
      resource_link_id: score.resourceLinkId,
      student_id: score.studentId,
      lesson_slug: score.lessonSlug,
      payload: score.payload,
      timestamp: score.timestamp,
      created_at: score.createdAt,
      state: 'pending',
      attempts: 0,
      next_attempt_at: score.createdAt,
    })
    .execute()
}

/** A row as read: PostgreSQL gives its integers back as strings. */
function scoreRow<R extends LtiScoreRow>(row: R): R {
  return {
    ...row,
    attempts: Number(row.attempts),
    last_status: row.last_status === null ? null : Number(row.last_status),
  }
}

/**
 * Takes up to `limit` due scores for `leaseMs`, oldest due first; resolves to their ids. The
 * state and lease are checked again on the row itself: on PostgreSQL a claimer that waited for
 * another's update of the row sees its lease and leaves it; on SQLite claims run one at a time.
 */
export async function leaseDueScores(
  db: Db,
  { now, leaseMs, limit }: { now: number; leaseMs: number; limit: number },
): Promise<string[]> {
  const at = isoAt(now)
  const due = db
    .selectFrom('lti_scores')
    .select('id')
    .where('state', '=', 'pending')
    .where('next_attempt_at', '<=', at)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', at)]))
    .orderBy('next_attempt_at')
    .orderBy('id')
    .limit(limit)
  const rows = await db
    .updateTable('lti_scores')
    .set({ lease_until: isoAt(now + leaseMs) })
    .where('id', 'in', due)
    .where('state', '=', 'pending')
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', at)]))
    .returning('id')
    .execute()
  return rows.map((row) => row.id)
}

/**
 * Why the registration aliased `r` may not be sent a score about the student of the score
 * aliased `s` at `at`, or null when it may: the organisation suspended, no agreement in force, or
 * the student no longer linked to the organisation; the API's rule, in the API's order.
 */
function scoreRefusal(at: string): RawBuilder<DeliveryRefusal | null> {
  return sql<DeliveryRefusal | null>`case
    when not exists (
      select 1 from organisations as o where o.id = r.organisation_id and o.status = 'active'
    ) then 'denied_suspended'
    when not exists (
      select 1 from agreements as a
      where a.organisation_id = r.organisation_id and a.signed_at <= ${at}
        and (a.expires_at is null or a.expires_at > ${at})
        and (a.ended_at is null or a.ended_at > ${at})
    ) then 'denied_agreement'
    when not exists (
      select 1 from student_organisations as so
      where so.student_id = s.student_id and so.organisation_id = r.organisation_id
    ) then 'denied_unlinked'
  end`
}

/** A claimed score with what sending it needs, and what may keep it from being sent. */
export interface ClaimedScore extends LtiScoreRow {
  registration_status: LtiRegistrationStatus
  organisation_id: string
  client_id: string
  token_url: string
  token_audience: string | null
  scopes: string
  /** The resource link's line item now (a later launch may have changed it); null when it has none. */
  line_item_url: string | null
  refusal: DeliveryRefusal | null
  /** A newer score of the same target is queued or sent: this one would only go back in time. */
  superseded: boolean
}

export async function claimedScores(db: Db, ids: readonly string[], now: number): Promise<ClaimedScore[]> {
  if (ids.length === 0) return []
  const rows = await db
    .selectFrom('lti_scores as s')
    .innerJoin('lti_registrations as r', 'r.id', 's.registration_id')
    .leftJoin('lti_resource_links as l', (join) =>
      join.onRef('l.registration_id', '=', 's.registration_id').onRef('l.resource_link_id', '=', 's.resource_link_id'),
    )
    .selectAll('s')
    .select([
      'r.status as registration_status',
      'r.organisation_id',
      'r.client_id',
      'r.token_url',
      'r.token_audience',
      'r.scopes',
      'l.line_item_url',
      scoreRefusal(isoAt(now)).as('refusal'),
      sql<number | boolean>`exists (
        select 1 from lti_scores as n
        where n.registration_id = s.registration_id and n.resource_link_id = s.resource_link_id
          and n.student_id = s.student_id and n.timestamp > s.timestamp and n.state <> 'cancelled'
      )`.as('superseded'),
    ])
    .where('s.id', 'in', ids)
    .orderBy('s.timestamp')
    .orderBy('s.id')
    .execute()
  return rows.map((row) => ({ ...scoreRow(row), superseded: Boolean(row.superseded) }))
}

/** Ends a claimed score unsent (`cancelled` or `failed`) with `reason`, if the claim still holds it. */
export async function endClaimedScore(
  trx: Db,
  claimed: Pick<LtiScoreRow, 'id' | 'lease_until'>,
  state: 'cancelled' | 'failed',
  reason: string,
): Promise<boolean> {
  const result = await trx
    .updateTable('lti_scores')
    .set({ state, next_attempt_at: null, lease_until: null, last_error: reason })
    .where('id', '=', claimed.id)
    .where('state', '=', 'pending')
    .where('lease_until', '=', claimed.lease_until)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/** Marks the score as first got by the platform now; true for the one call that did (it writes the disclosure). */
export async function markFirstSent(trx: Db, id: string, now: number): Promise<boolean> {
  const result = await trx
    .updateTable('lti_scores')
    .set({ first_sent_at: isoAt(now) })
    .where('id', '=', id)
    .where('first_sent_at', 'is', null)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

export interface ScoreOutcome {
  state: 'pending' | 'sent' | 'failed'
  attempts: number
  nextAttemptAt: number | null
  status: number | null
  error: string | null
  response: string | null
  sentAt: number | null
}

/**
 * Writes an attempt's outcome if the claim still holds the score (pending, under its lease);
 * resolves to whether it did. A score cancelled or erased meanwhile is left as it is.
 */
export async function recordScoreOutcome(
  trx: Db,
  claimed: Pick<LtiScoreRow, 'id' | 'lease_until'>,
  outcome: ScoreOutcome,
  now: number,
): Promise<boolean> {
  const result = await trx
    .updateTable('lti_scores')
    .set({
      state: outcome.state,
      attempts: outcome.attempts,
      next_attempt_at: outcome.nextAttemptAt === null ? null : isoAt(outcome.nextAttemptAt),
      lease_until: null,
      last_attempt_at: isoAt(now),
      last_status: outcome.status,
      last_error: outcome.error,
      last_response: outcome.response,
      sent_at: outcome.sentAt === null ? null : isoAt(outcome.sentAt),
    })
    .where('id', '=', claimed.id)
    .where('state', '=', 'pending')
    .where('lease_until', '=', claimed.lease_until)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

export function scoreById(db: Db, id: string): Promise<LtiScoreRow | undefined> {
  return db
    .selectFrom('lti_scores')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirst()
    .then((row) => (row === undefined ? undefined : scoreRow(row)))
}

/** Puts a failed score back in the queue, due now with a fresh set of attempts; false when it is no longer failed. */
export async function requeueFailedScore(trx: Db, id: string, now: number): Promise<boolean> {
  const result = await trx
    .updateTable('lti_scores')
    .set({ state: 'pending', attempts: 0, next_attempt_at: isoAt(now), lease_until: null })
    .where('id', '=', id)
    .where('state', '=', 'failed')
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/** Where a page of the listing starts: after the score created at `createdAt` with id `id`. */
export interface ScoreCursor {
  createdAt: string
  id: string
}

export interface ListedScore extends LtiScoreRow {
  /** The registration's name; null if it is gone. */
  registration_name: string | null
}

/** One page of scores, newest first, of one state or all; `next` when older ones follow. */
export async function pageScores(
  db: Db,
  page: { state?: LtiScoreState | undefined; before?: ScoreCursor | undefined; limit: number },
): Promise<{ rows: ListedScore[]; next: ScoreCursor | null }> {
  const before = page.before
  const rows = await db
    .selectFrom('lti_scores as s')
    .leftJoin('lti_registrations as r', 'r.id', 's.registration_id')
    .selectAll('s')
    .select('r.name as registration_name')
    .$if(page.state !== undefined, (q) => q.where('s.state', '=', page.state!))
    .$if(before !== undefined, (q) =>
      q.where((eb) =>
        eb.or([
          eb('s.created_at', '<', before!.createdAt),
          eb.and([eb('s.created_at', '=', before!.createdAt), eb('s.id', '<', before!.id)]),
        ]),
      ),
    )
    .orderBy('s.created_at', 'desc')
    .orderBy('s.id', 'desc')
    .limit(page.limit + 1)
    .execute()
  const kept = rows.slice(0, page.limit).map(scoreRow)
  const last = kept.at(-1)
  return {
    rows: kept,
    next: rows.length > page.limit && last !== undefined ? { createdAt: last.created_at, id: last.id } : null,
  }
}

/** How many scores are in each state (states with none left out). */
export async function countScoresByState(db: Db): Promise<Partial<Record<LtiScoreState, number>>> {
  const rows = await db
    .selectFrom('lti_scores')
    .select(['state', (eb) => eb.fn.countAll<number | string>().as('n')])
    .groupBy('state')
    .execute()
  return Object.fromEntries(rows.map((row) => [row.state, Number(row.n)]))
}

/** How many of a registration's scores are in each state, for its page. */
export async function scoreCountsOfRegistration(db: Db, registrationId: string): Promise<Record<string, number>> {
  const rows = await db
    .selectFrom('lti_scores')
    .select(['state', (eb) => eb.fn.countAll<number | string>().as('count')])
    .where('registration_id', '=', registrationId)
    .groupBy('state')
    .execute()
  return Object.fromEntries(rows.map((row) => [row.state, Number(row.count)]))
}
