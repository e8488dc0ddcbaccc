/**
 * A verified resource link launch opens a lesson: the one the link names in `custom.lesson` (put
 * there at deep linking), else the one recorded for the link, else none. A learner's launch with
 * a `sub` makes or finds their student (with the lesson's tier) and records the link; a teacher's
 * launch, or an anonymous one, previews the lesson and records nothing.
 */
import type { Kysely } from 'kysely'
import type { Clock } from '../clock.js'
import type { LaunchFacts } from '../domain/lti-launch.js'
import { LtiRefusal } from '../domain/lti-refusal.js'
import { isLearnerOnly } from '../domain/lti-roles.js'
import { type LessonHeading, lessonHeading } from '../storage/catalog-repository.js'
import { resourceLinkById } from '../storage/lti-resource-link-repository.js'
import type { Database, LtiRegistrationRow } from '../storage/tables.js'
import { studentForLaunch } from './lti-students.js'
import { recordResourceLink } from './lti-resource-links.js'

export interface OpenedLesson {
  lesson: LessonHeading
  /** Null for a preview: nothing is recorded for it. */
  studentId: string | null
}

type Registration = Pick<LtiRegistrationRow, 'id' | 'organisation_id' | 'school_id' | 'share_id'>

/** The lesson a resource link launch opens, and the student it records for; throws LtiRefusal (404) without one. */
export async function openResourceLink(
  db: Kysely<Database>,
  registration: Registration,
  launch: LaunchFacts & { resourceLinkId: string },
  clock: Clock,
): Promise<OpenedLesson> {
  const named = launch.lesson === null ? undefined : await lessonHeading(db, launch.lesson)
  const stored = named === undefined ? await resourceLinkById(db, registration.id, launch.resourceLinkId) : undefined
  const lesson = named ?? (stored === undefined ? undefined : await lessonHeading(db, stored.lesson_slug))
  if (lesson === undefined)
    throw new LtiRefusal(
      404,
      'no_lesson',
      'This link has no lesson',
      stored === undefined
        ? 'The link was not placed with the tool’s lesson picker, so it names no lesson. A teacher adds the lesson ' +
            'again through the platform’s “add content” (deep linking) step.'
        : 'The lesson this link opened is no longer in the catalog. A teacher places another lesson through the ' +
            'platform’s “add content” (deep linking) step.',
    )
  if (launch.sub === null || !isLearnerOnly(launch.roles)) return { lesson, studentId: null }
  const { studentId } = await studentForLaunch(
    db,
    registration,
    { sub: launch.sub, givenName: launch.firstName, tier: lesson.tier },
    clock.now(),
  )
  await recordResourceLink(
    db,
    {
      registrationId: registration.id,
      resourceLinkId: launch.resourceLinkId,
      deploymentId: launch.deploymentId,
      contextId: launch.contextId,
      lessonSlug: lesson.slug,
      lineItemUrl: launch.ags?.lineItem ?? null,
      lineItemsUrl: launch.ags?.lineItems ?? null,
    },
    clock,
  )
  return { lesson, studentId }
}
