/**
 * Whether a webhook endpoint may still hear about a student: the same rule as the API's, asked
 * when an event is queued, when a delivery is claimed for each attempt, and on resend, so that
 * nothing about a child is sent once the organisation's access has ended.
 */
import { type Expression, type RawBuilder, sql } from 'kysely'
import type { DeliveryRefusal } from '../domain/webhook-events.js'

/**
 * Why the endpoint aliased `e` may not be sent an event about `studentId` at `at`, or null when
 * it may, in the order the API checks: the organisation suspended (`denied_suspended`); a live
 * endpoint without an agreement in force (`denied_agreement`); the student not linked to the
 * organisation, or not of the endpoint's mode (`denied_unlinked`: sandbox students reach test
 * endpoints only, real ones live endpoints only).
 */
export function accessRefusal(
  studentId: Expression<string | null> | string,
  at: string,
): RawBuilder<DeliveryRefusal | null> {
  return sql<DeliveryRefusal | null>`case
    when not exists (
      select 1 from organisations as o where o.id = e.organisation_id and o.status = 'active'
    ) then 'denied_suspended'
    when e.mode = 'live' and not exists (
      select 1 from agreements as a
      where a.organisation_id = e.organisation_id and a.signed_at <= ${at}
        and (a.expires_at is null or a.expires_at > ${at})
        and (a.ended_at is null or a.ended_at > ${at})
    ) then 'denied_agreement'
    when not exists (
      select 1 from student_organisations as l inner join students as s on s.id = l.student_id
      where l.student_id = ${studentId} and l.organisation_id = e.organisation_id
        and s.sandbox = case when e.mode = 'test' then 1 else 0 end
    ) then 'denied_unlinked'
  end`
}
