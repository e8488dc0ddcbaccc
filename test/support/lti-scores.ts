/**
 * Set-up for the score tests: a registered test platform with the app's clock, a student a launch
 * made, and lessons placed in the platform's course as resource links (written straight into
 * lti_resource_links, as a launch records them), then progress changes queued as the player does.
 */
import { studentForLaunch } from '../../src/cases/lti-students.js'
import { type LtiProgressChange, queueScores } from '../../src/cases/lti-scores.js'
import { isoAt } from '../../src/clock.js'
import type { Storage } from '../../src/storage/connection.js'
import type { LtiRegistrationRow } from '../../src/storage/tables.js'
import { inTransaction } from '../../src/storage/transaction.js'
import type { TestContext } from '../helper.js'
import { TestPlatform } from './lti-platform.js'
import { registerPlatform } from './lti.js'

export const LESSON = 'explorer/e1-robots-follow-instructions'
export const OTHER_LESSON = 'explorer/e2-steps-in-order'

export interface ScoreSetting {
  platform: TestPlatform
  registration: LtiRegistrationRow
  /** The line item of course-1's first resource link, as the platform's AGS claim names it. */
  lineItem: string
}

/** A test platform registered for `organisationId` (acme: an agreement) and checking assertions at the app's clock. */
export async function scorePlatform(
  t: TestContext,
  organisationId = t.fixtures.orgs.acme,
  options: { activate?: boolean } = {},
): Promise<ScoreSetting> {
  const platform = await new TestPlatform().start()
  platform.now = () => t.clock.now()
  const registration = await registerPlatform(t.storage, t.clock, platform, {
    organisationId,
    toolBase: t.base,
    ...options,
  })
  return { platform, registration, lineItem: `${platform.origin}/contexts/course-1/lineitems/1` }
}

/** The student of `sub` at the registration, as a first launch makes them. */
export async function launchedStudent(t: TestContext, registration: LtiRegistrationRow, sub: string): Promise<string> {
  const launched = await studentForLaunch(
    t.storage.db,
    registration,
    { sub, givenName: 'Ada', tier: 'explorer' },
    t.clock.now(),
  )
  return launched.studentId
}

/** A resource link of `lesson` in the registration's course, with `lineItem` as its AGS line item (null: none). */
export async function placeLesson(
  storage: Storage,
  registration: LtiRegistrationRow,
  link: { id: string; lesson?: string; lineItem: string | null; deploymentId?: string },
  now: number,
): Promise<void> {
  const at = isoAt(now)
  await storage.db
    .insertInto('lti_resource_links')
    .values({
      registration_id: registration.id,
      resource_link_id: link.id,
      deployment_id: link.deploymentId ?? 'deployment',
      context_id: 'course-1',
      lesson_slug: link.lesson ?? LESSON,
      line_item_url: link.lineItem,
      line_items_url: null,
      created_at: at,
      updated_at: at,
    })
    .execute()
}

/** Queues the scores of a progress change in a transaction of its own, as the player's change would. */
export function queueChange(storage: Storage, change: LtiProgressChange): Promise<number> {
  return inTransaction(storage.db, (trx) => queueScores(trx, change))
}

/** The outbox's rows, oldest first. */
export function scoreRows(storage: Storage) {
  return storage.db.selectFrom('lti_scores').selectAll().orderBy('timestamp').orderBy('id').execute()
}
