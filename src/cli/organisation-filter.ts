/**
 * A listing's --org filter, and every organisation's name by id, for the listings that name the
 * organisation beside each row (agreement list, agreement ended, key list).
 */
import type { Kysely } from 'kysely'
import type { Database } from '../storage/tables.js'

export async function organisationFilter(
  db: Kysely<Database>,
  org: string | undefined,
): Promise<{ organisationId: string | undefined; names: Map<string, string> }> {
  const { findOrganisation, listOrganisations } = await import('../storage/access-repository.js')
  const organisationId = org === undefined ? undefined : (await findOrganisation(db, org)).id
  const names = new Map((await listOrganisations(db)).map((o) => [o.id, o.name]))
  return { organisationId, names }
}
