/**
 * Erasing students from the service: one transaction deletes each student's first name,
 * progress, links and change-log rows (they hold tiers and progress), their LTI identities and
 * scores (a platform's `sub` for them, and their progress), and clears the webhook deliveries
 * about them (storage/student-removal-repository.ts), and tells every organisation the student
 * was linked to, by a `student_deleted` notice in its change feed (the id and the time only) and
 * a webhook of the same name to its endpoints that subscribed, so its copy can drop the child.
 * What stays is ids: the disclosure log (the district still answers for what was disclosed; its
 * own retention decides), the schools the student attended, earlier notices, the audit log and
 * the delivery rows. Sandbox students are synthetic and are regenerated with their sandbox, never
 * erased one by one.
 *
 * Order within the transaction, for PostgreSQL: links and progress first, then the student's row,
 * which waits for an enroll or import of the student in flight and keeps any later one away, then
 * what was written about the student up to that moment (change-log rows, deliveries), and the
 * notices last, since numbering them holds the change counter to the commit
 * (storage/student-change-log.ts). An import adding progress to the student meanwhile fails the
 * erasure, which is then simply run again.
 */
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import { ConflictError } from '../domain/errors.js'
import { recordStudentChanges } from '../storage/student-change-log.js'
import { sandboxFlags } from '../storage/student-reference-repository.js'
import { deleteLtiRows, deleteStudentRows, forgetStudentHistory } from '../storage/student-removal-repository.js'
import type { Database } from '../storage/tables.js'
import { inTransaction } from '../storage/transaction.js'
import { announceStudentNotices } from '../storage/webhook-repository.js'
import { auditOperator, type OperatorAudit } from './operator-action.js'
import { chunks } from '../storage/statement-chunks.js'

type Db = Kysely<Database>

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

/** A caller's own audit row for one erased student (the CLI's), written in the erasure's transaction. */
export type ErasedStudentAudit = (trx: Db, student: ErasedStudent) => Promise<void>

/**
 * Erases the students `ids` in one transaction (see the module comment). Ids no student has are
 * returned as missing, so running an erasure again finishes it. Refuses the whole batch, with
 * SandboxStudentError, when any of them is a sandbox student. Each erased student's audit row,
 * an operator's or the caller's own, is written in the transaction before the notices are numbered.
 */
export function eraseStudents(
  db: Db,
  ids: readonly string[],
  now: number,
  audit?: OperatorAudit | ErasedStudentAudit,
): Promise<ErasureOutcome> {
  return inTransaction(db, async (trx) => {
    const erasure = await eraseStudentRows(trx, ids, now)
    for (const student of audit === undefined ? [] : erasure.outcome.erased) {
      const detail = { organisations: student.organisations, progress: student.progress }
      if (typeof audit === 'function') await audit(trx, student)
      else await auditOperator(trx, audit, { action: 'students.erase', target: `student:${student.id}`, detail }, now)
    }
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
 * holds the change counter to the commit (storage/student-change-log.ts). Webhooks are queued here.
 */
export async function eraseStudentRows(trx: Db, ids: readonly string[], now: number): Promise<PendingErasure> {
  if (!trx.isTransaction) throw new Error('eraseStudentRows must run inside a transaction')
  const unique = [...new Set(ids)]
  const stored = await sandboxFlags(trx, unique)
  const sandbox = unique.filter((id) => stored.get(id) === true)
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
    const deleted = await deleteStudentRows(trx, part, erasedAt)
    for (const link of deleted.links) links.get(link.studentId)!.push(link.organisationId)
    for (const studentId of deleted.progress) progress.set(studentId, progress.get(studentId)! + 1)
  }
  for (const part of chunks(present)) {
    const forgotten = await forgetStudentHistory(trx, part)
    outcome.changes += forgotten.changes
    outcome.cancelledDeliveries += forgotten.cancelledDeliveries
    await deleteLtiRows(trx, part)
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
