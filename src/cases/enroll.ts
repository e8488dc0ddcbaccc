/**
 * Enrolling a student (setting their tier), for both request paths: the change, its
 * announcement to webhooks, the student change log and the disclosure record, in one
 * transaction of the write queue.
 */
import { isoAt } from '../clock.js'
import type { NewStudentChange } from '../domain/student-change.js'
import type { TierId } from '../domain/tiers.js'
import { recordDisclosure } from '../storage/disclosure-log.js'
import { recordStudentChanges } from '../storage/student-change-log.js'
import { changeTier, type StudentAccess } from '../storage/student-repository.js'
import { announceStudentChanges } from '../storage/webhook-repository.js'
import type { WriteQueue } from '../storage/write-queue.js'

export interface Enrollment {
  profileId: string
  tier: TierId
  updatedAt: string
  changed: boolean
}

/**
 * Sets a student's tier. Concurrent enrolls of one student serialise on the student's row: each
 * decides on the tier the one before it committed, so the last one committed wins and every
 * answer names the tier asked for. Setting the tier the student already has changes nothing and
 * returns the stored time, so a retried request is harmless. Whether the tier changed is decided
 * by comparing tiers, never times: two enrolls may share a millisecond. A change goes to the
 * student change log; setting the same tier again logs nothing. Resolves once the change, its
 * log entry and its disclosure record are committed together.
 */
export async function enrollStudent(
  writes: WriteQueue,
  studentId: string,
  tier: TierId,
  context: StudentAccess,
  now: number,
): Promise<Enrollment | undefined> {
  return writes.transaction(async (trx) => {
    const sandbox = context.sandbox ? 1 : 0
    const at = isoAt(now)
    const found = await changeTier(trx, tier, at, studentId, sandbox, context.organisationId)
    if (found === undefined) {
      await recordDisclosure(trx, context, studentId, 'enroll', 'not_found')
      return undefined
    }
    const changed = Boolean(found.changed)
    // The change as imports record it: announced to webhooks, then written to the change log.
    const changes: NewStudentChange[] = changed ? [{ type: 'tier_changed', studentId, tier, changedAt: at }] : []
    if (changed && found.announce) await announceStudentChanges(trx, changes, now)
    await recordDisclosure(trx, context, studentId, 'enroll', changed ? 'updated' : 'unchanged')
    // Last: the change log's counter is held from here to the commit.
    await recordStudentChanges(trx, changes)
    return {
      profileId: studentId,
      tier,
      updatedAt: changed ? at : found.tier_updated_at,
      changed,
    }
  })
}
