/**
 * Taking a student away from partners: unlinking them from one organisation, or erasing them
 * from the service. Either is one transaction that also tells each organisation concerned, by a
 * notice in its change feed (`student_unlinked`, `student_deleted`: the id and the time only) and
 * a webhook of the same name to its endpoints that subscribed, so its copy can drop the child.
 *
 * Erasing deletes the student's first name, progress, links and change-log rows (they hold
 * tiers and progress), and clears the webhook deliveries about them: those not sent yet end not
 * sent, and every one loses its body and the receiver's answer. What stays is ids: the
 * disclosure log (the district still answers for what was disclosed; its own retention decides),
 * the schools the student attended (`erased_student_schools`, so the district's export by school
 * still finds those rows), earlier notices, the audit log and the delivery rows. Sandbox students are synthetic and are
 * regenerated with their sandbox, never erased one by one.
 *
 * Order within the transaction, for PostgreSQL: links and progress first, then the student's row,
 * which waits for an enroll or import of the student in flight and keeps any later one away, then
 * what was written about the student up to that moment (change-log rows, deliveries), and the
 * notices last, since numbering them holds the change counter to the commit
 * (student-change-log.ts). An import adding progress to the student meanwhile fails the erasure,
 * which is then simply run again.
 */
import { type Kysely, sql } from 'kysely'
import { isoAt } from '../clock.js'
import { ConflictError, NotFoundError } from '../domain/errors.js'
import { NOTICE_EVENTS } from '../domain/webhook-events.js'
import { lockOrganisations } from './share-locks.js'
import { recordStudentChanges } from './student-change-log.js'
import type { Database } from './tables.js'
import { inTransaction } from './transaction.js'
import { announceStudentNotices } from './webhook-repository.js'

type Db = Kysely<Database>

/** Ids per statement: under both engines' bound-parameter limits with room to spare. */
const CHUNK = 500

function* chunks<T>(items: readonly T[]): Generator<T[]> {
  for (let i = 0; i < items.length; i += CHUNK) yield items.slice(i, i + CHUNK)
}

export interface UnlinkOutcome {
  /** False when the student was not linked to the organisation: nothing changed, nobody was told. */
  unlinked: boolean
  /** Webhook deliveries queued. */
  webhooks: number
}

/**
 * Removes the link between a student and a partner organisation, with its notice and webhooks.
 * The organisation's keys and endpoints no longer reach the student at once: the API answers 404
 * and deliveries still queued about the student end not sent at their next claim.
 */
export function unlinkStudent(db: Db, studentId: string, organisationId: string, now: number): Promise<UnlinkOutcome> {
  return inTransaction(db, async (trx) => {
    const organisation = await trx
      .selectFrom('organisations')
      .select(['id', 'kind'])
      .where('id', '=', organisationId)
      .executeTakeFirst()
    if (organisation === undefined) throw new NotFoundError(`no organisation ${organisationId}`)
    if (organisation.kind === 'sandbox')
      throw new ConflictError(
        `organisation ${organisationId} is a sandbox, whose synthetic students come and go with it: nothing to unlink`,
      )
    await lockOrganisations(trx, [organisationId])
    // An explicit unlink takes the student out of every share of the organisation: a school
    // share links them again only if they join the school anew (school-shares.ts).
    await trx
      .deleteFrom('share_students')
      .where('student_id', '=', studentId)
      .where('organisation_id', '=', organisationId)
      .execute()
    const removed = await trx
      .deleteFrom('student_organisations')
      .where('student_id', '=', studentId)
      .where('organisation_id', '=', organisationId)
      .executeTakeFirst()
    if (Number(removed.numDeletedRows) === 0) return { unlinked: false, webhooks: 0 }
    const webhooks = await announceStudentNotices(trx, 'student.unlinked', [{ studentId, organisationId }], now)
    await recordStudentChanges(trx, [{ type: 'student_unlinked', studentId, organisationId, changedAt: isoAt(now) }])
    return { unlinked: true, webhooks }
  })
}

/** What erasing one student removed and whom it told. */
export interface ErasedStudent {
  id: string
  /** The organisations it was linked to, each told with a `student_deleted` notice. */
  organisations: string[]
  progress: number
}

export interface ErasureOutcome {
  erased: ErasedStudent[]
  /** Ids no student has (never stored, or erased already). */
  missing: string[]
  /** Change-log rows of the erased students deleted. */
  changes: number
  /** Deliveries about them that were not sent yet and now never will be. */
  cancelledDeliveries: number
  /** `student.deleted` deliveries queued. */
  webhooks: number
}

/** Why a student cannot be erased: a sandbox student is regenerated with its sandbox. */
export class SandboxStudentError extends ConflictError {
  override name = 'SandboxStudentError'
  constructor(readonly ids: readonly string[]) {
    super(
      `${ids.length === 1 ? `student ${ids[0]} is` : `${ids.length} students are`} sandbox (synthetic) ` +
        'students, which are regenerated with their sandbox and never erased one by one',
    )
  }
}

/** The last error a delivery about an erased student shows in the partner's delivery log. */
export const ERASED_REASON = 'the student was erased'

/**
 * Erases the students `ids` in one transaction (see the module comment). Ids no student has are
 * returned as missing, so running an erasure again finishes it. Refuses the whole batch, with
 * SandboxStudentError, when any of them is a sandbox student. `beforeNotices` runs inside the
 * transaction before the notices are numbered: the caller's audit rows go there.
 */
export function eraseStudents(
  db: Db,
  ids: readonly string[],
  now: number,
  beforeNotices?: (trx: Db, outcome: ErasureOutcome) => Promise<void>,
): Promise<ErasureOutcome> {
  return inTransaction(db, async (trx) => {
    const erasure = await eraseStudentRows(trx, ids, now)
    await beforeNotices?.(trx, erasure.outcome)
    await recordErasureNotices(trx, erasure)
    return erasure.outcome
  })
}

/** An erasure whose rows are gone and whose notices are still to be numbered. */
export interface PendingErasure {
  outcome: ErasureOutcome
  notices: readonly { studentId: string; organisationId: string }[]
  now: number
}

/**
 * The writes of an erasure, for a caller that erases inside a larger transaction `trx` (a roster
 * import) and numbers the notices with `recordErasureNotices` after its own writes: the number
 * holds the change counter to the commit (student-change-log.ts). Webhooks are queued here.
 */
export async function eraseStudentRows(trx: Db, ids: readonly string[], now: number): Promise<PendingErasure> {
  if (!trx.isTransaction) throw new Error('eraseStudentRows must run inside a transaction')
  const unique = [...new Set(ids)]
  const stored = new Map<string, number>()
  for (const part of chunks(unique))
    for (const row of await trx.selectFrom('students').select(['id', 'sandbox']).where('id', 'in', part).execute())
      stored.set(row.id, Number(row.sandbox))
  const sandbox = unique.filter((id) => stored.get(id) === 1)
  if (sandbox.length > 0) throw new SandboxStudentError(sandbox)
  const present = unique.filter((id) => stored.has(id))
  const outcome: ErasureOutcome = {
    erased: [],
    missing: unique.filter((id) => !stored.has(id)),
    changes: 0,
    cancelledDeliveries: 0,
    webhooks: 0,
  }
  if (present.length === 0) return { outcome, notices: [], now }

  const erasedAt = isoAt(now)
  const links = new Map<string, string[]>(present.map((id) => [id, []]))
  const progress = new Map<string, number>(present.map((id) => [id, 0]))
  for (const part of chunks(present)) {
    await trx.deleteFrom('share_students').where('student_id', 'in', part).execute()
    await trx
      .insertInto('erased_student_schools')
      .columns(['school_id', 'student_id', 'erased_at'])
      .expression(
        trx
          .selectFrom('student_schools')
          .select(['school_id', 'student_id', sql<string>`cast(${erasedAt} as text)`.as('erased_at')])
          .where('student_id', 'in', part),
      )
      .onConflict((oc) => oc.columns(['school_id', 'student_id']).doNothing())
      .execute()
    await trx.deleteFrom('student_schools').where('student_id', 'in', part).execute()
    for (const row of await trx
      .deleteFrom('student_organisations')
      .where('student_id', 'in', part)
      .returning(['student_id', 'organisation_id'])
      .execute())
      links.get(row.student_id)!.push(row.organisation_id)
    for (const row of await trx
      .deleteFrom('progress')
      .where('student_id', 'in', part)
      .returning('student_id')
      .execute())
      progress.set(row.student_id, progress.get(row.student_id)! + 1)
    await trx.deleteFrom('students').where('id', 'in', part).execute()
  }
  for (const part of chunks(present)) {
    const changes = await trx
      .deleteFrom('student_changes')
      .where('student_id', 'in', part)
      // Earlier notices hold the id only, and an organisation may not have read its own yet.
      .where('organisation_id', 'is', null)
      .executeTakeFirst()
    outcome.changes += Number(changes.numDeletedRows)
    const cancelled = await trx
      .updateTable('webhook_deliveries')
      .set({ state: 'not_sent', next_attempt_at: null, lease_until: null, last_error: ERASED_REASON })
      .where('student_id', 'in', part)
      .where('state', '=', 'pending')
      .where('event_type', 'not in', NOTICE_EVENTS)
      .executeTakeFirst()
    outcome.cancelledDeliveries += Number(cancelled.numUpdatedRows)
    // The bodies held the student's tier and progress, and an answer may echo them.
    await trx
      .updateTable('webhook_deliveries')
      .set({ payload: '{"erased":true}', last_response: null })
      .where('student_id', 'in', part)
      .where('event_type', 'not in', NOTICE_EVENTS)
      .execute()
  }
  for (const id of present)
    outcome.erased.push({ id, organisations: links.get(id)!.sort(), progress: progress.get(id)! })
  const notices = outcome.erased.flatMap((student) =>
    student.organisations.map((organisationId) => ({ studentId: student.id, organisationId })),
  )
  outcome.webhooks = await announceStudentNotices(trx, 'student.deleted', notices, now)
  return { outcome, notices, now }
}

/** Numbers an erasure's `student_deleted` notices: the caller's last write but other log rows. */
export async function recordErasureNotices(trx: Db, erasure: PendingErasure): Promise<void> {
  const changedAt = isoAt(erasure.now)
  await recordStudentChanges(
    trx,
    erasure.notices.map((notice) => ({ type: 'student_deleted' as const, ...notice, changedAt })),
  )
}
