/**
 * The student an LTI launch is: one per registration and `sub`, made at the first launch, owned by
 * the registration's organisation (linked through the registration's share) and, when the
 * registration names a school, attending it so that the school's shares follow them. Two first
 * launches of one user at the same moment make one student.
 */
import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import { ltiFirstName } from '../domain/lti-first-name.js'
import type { NewStudentChange } from '../domain/student-change.js'
import type { TierId } from '../domain/tiers.js'
import { claimLtiStudent, insertLtiStudentRow, ltiStudentId } from '../storage/lti-student-repository.js'
import { holdStudents } from '../storage/share-repository.js'
import { recordStudentChanges } from '../storage/student-change-log.js'
import type { Database, LtiRegistrationRow } from '../storage/tables.js'
import { inTransaction } from '../storage/transaction.js'
import { announceStudentChanges } from '../storage/webhook-repository.js'
import { changeAttendance } from './school-attendance.js'

export interface LaunchedStudent {
  studentId: string
  created: boolean
}

/**
 * The student of (registration, sub), made now if this is their first launch, with `tier` (the
 * launched lesson's). `givenName` is the launch's `given_name` claim, as it came.
 */
export async function studentForLaunch(
  db: Kysely<Database>,
  registration: Pick<LtiRegistrationRow, 'id' | 'organisation_id' | 'school_id' | 'share_id'>,
  launch: { sub: string; givenName: unknown; tier: TierId },
  now: number,
): Promise<LaunchedStudent> {
  const known = await ltiStudentId(db, registration.id, launch.sub)
  if (known !== undefined) return { studentId: known, created: false }
  return inTransaction(db, async (trx) => {
    const at = isoAt(now)
    const studentId = randomUUID()
    if (
      !(await claimLtiStudent(trx, {
        registration_id: registration.id,
        sub: launch.sub,
        student_id: studentId,
        created_at: at,
      }))
    ) {
      // Another launch of the same user made them first.
      return { studentId: (await ltiStudentId(trx, registration.id, launch.sub))!, created: false }
    }
    await insertLtiStudentRow(
      trx,
      { id: studentId, firstName: ltiFirstName(launch.givenName, launch.sub), tier: launch.tier },
      at,
    )
    if (registration.school_id !== null)
      await changeAttendance(trx, { joined: [{ studentId, schoolId: registration.school_id }], left: [] }, now)
    if (registration.share_id !== null)
      await holdStudents(
        trx,
        { id: registration.share_id, organisationId: registration.organisation_id },
        [studentId],
        now,
      )
    // As a roster import records a new student: their tier, announced to the webhooks of those who see them.
    const changes: NewStudentChange[] = [{ type: 'tier_changed', studentId, tier: launch.tier, changedAt: at }]
    await announceStudentChanges(trx, changes, now)
    // Last: the change log's counter is held from here to the commit.
    await recordStudentChanges(trx, changes)
    return { studentId, created: true }
  })
}
