/**
 * A resource link placed a lesson into a course: recorded at a learner's launch with what the
 * launch said (deployment, context, lesson, the AGS line item URLs), so that later launches
 * without `custom.lesson` still open the lesson and the student's scores find their line item.
 */
import type { Kysely } from 'kysely'
import { type Clock, isoAt } from '../clock.js'
import { upsertResourceLink } from '../storage/lti-resource-link-repository.js'
import type { Database } from '../storage/tables.js'

export interface ResourceLinkLaunch {
  registrationId: string
  resourceLinkId: string
  deploymentId: string
  contextId: string | null
  lessonSlug: string
  lineItemUrl: string | null
  lineItemsUrl: string | null
}

export async function recordResourceLink(db: Kysely<Database>, link: ResourceLinkLaunch, clock: Clock): Promise<void> {
  const at = isoAt(clock.now())
  await upsertResourceLink(db, {
    registration_id: link.registrationId,
    resource_link_id: link.resourceLinkId,
    deployment_id: link.deploymentId,
    context_id: link.contextId,
    lesson_slug: link.lessonSlug,
    line_item_url: link.lineItemUrl,
    line_items_url: link.lineItemsUrl,
    created_at: at,
    updated_at: at,
  })
}
