/**
 * The resource links that placed a lesson into a course (migration 0028), by registration and the
 * platform's resource link id: which lesson a launch of the link opens, and the AGS line item
 * URLs its scores go to. cases/lti-resource-links.ts writes them.
 */
import type { Kysely } from 'kysely'
import type { Database, LtiResourceLinksTable } from './tables.js'

type Db = Kysely<Database>

export function resourceLinkById(
  db: Db,
  registrationId: string,
  resourceLinkId: string,
): Promise<LtiResourceLinksTable | undefined> {
  return db
    .selectFrom('lti_resource_links')
    .selectAll()
    .where('registration_id', '=', registrationId)
    .where('resource_link_id', '=', resourceLinkId)
    .executeTakeFirst()
}

/**
 * Records the link, or updates it with what the latest launch said; line item URLs the launch
 * did not carry stay as they were.
 */
export async function upsertResourceLink(db: Db, row: LtiResourceLinksTable): Promise<void> {
  await db
    .insertInto('lti_resource_links')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['registration_id', 'resource_link_id']).doUpdateSet((eb) => ({
        deployment_id: eb.ref('excluded.deployment_id'),
        context_id: eb.ref('excluded.context_id'),
        lesson_slug: eb.ref('excluded.lesson_slug'),
        line_item_url: eb.fn.coalesce('excluded.line_item_url', 'lti_resource_links.line_item_url'),
        line_items_url: eb.fn.coalesce('excluded.line_items_url', 'lti_resource_links.line_items_url'),
        updated_at: eb.ref('excluded.updated_at'),
      })),
    )
    .execute()
}
