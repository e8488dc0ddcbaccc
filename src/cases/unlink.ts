/**
 * Unlinking a student from one partner organisation: the link and the student's place in every
 * share of the organisation go in one transaction that tells the organisation, by a
 * `student_unlinked` notice in its change feed (the id and the time only) and a webhook of the
 * same name to its endpoints that subscribed, so its copy can drop the child. A school share
 * links the student again only if they join the school anew (school-attendance.ts).
 */
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import { ConflictError, NotFoundError } from '../domain/errors.js'
import { organisationById } from '../storage/access-repository.js'
import { lockOrganisations } from '../storage/share-lock-repository.js'
import { recordStudentChanges } from '../storage/student-change-log.js'
import { deleteLink } from '../storage/student-removal-repository.js'
import type { Database } from '../storage/tables.js'
import { inTransaction } from '../storage/transaction.js'
import { announceStudentNotices } from '../storage/webhook-repository.js'
import { auditOperator, type OperatorAudit } from './operator-action.js'

export interface UnlinkOutcome {
  /** False when the student was not linked to the organisation: nothing changed, nobody was told. */
  unlinked: boolean
  /** Webhook deliveries queued. */
  webhooks: number
}

/**
 * Removes the link between a student and a partner organisation, with its notice and webhooks.
 * The organisation's keys and endpoints no longer reach the student at once: the API answers 404
 * and deliveries still queued about the student end not sent at their next claim. An operator's
 * unlink is audited, whether or not the student was linked.
 */
export function unlinkStudent(
  db: Kysely<Database>,
  studentId: string,
  organisationId: string,
  now: number,
  audit?: OperatorAudit,
): Promise<UnlinkOutcome> {
  return inTransaction(db, async (trx) => {
    const organisation = await organisationById(trx, organisationId)
    if (organisation === undefined) throw new NotFoundError(`no organisation ${organisationId}`)
    if (organisation.kind === 'sandbox')
      throw new ConflictError(
        `organisation ${organisationId} is a sandbox, whose synthetic students come and go with it: nothing to unlink`,
      )
    await lockOrganisations(trx, [organisationId])
    const outcome = { unlinked: false, webhooks: 0 }
    if (await deleteLink(trx, studentId, organisationId)) {
      outcome.unlinked = true
      outcome.webhooks = await announceStudentNotices(trx, 'student.unlinked', [{ studentId, organisationId }], now)
      await recordStudentChanges(trx, [{ type: 'student_unlinked', studentId, organisationId, changedAt: isoAt(now) }])
    }
    const detail = { organisation: organisation.name, organisationId: organisation.id, ...outcome }
    await auditOperator(trx, audit, { action: 'links.remove', target: `student:${studentId}`, detail }, now)
    return outcome
  })
}
