/**
 * A listing's --org filter, and every organisation's name by id, for the listings that name the
 * organisation beside each row (agreement list, agreement ended, key list).
 */
import type { Kysely } from 'kysely'
import type { Database } from '../storage/tables.js'
import { withStorage } from './storage-session.js'

/** The rows `list` gives for the organisation `org` names (all when it is undefined), and every organisation's name. */
export function listedByOrganisation<T>(
  org: string | undefined,
  list: (db: Kysely<Database>, organisationId: string | undefined) => Promise<T[]>,
): Promise<{ rows: T[]; names: Map<string, string> }> {
  return withStorage(async ({ storage: { db } }) => {
    const { findOrganisation, listOrganisations } = await import('../storage/access-repository.js')
    const organisationId = org === undefined ? undefined : (await findOrganisation(db, org)).id
    const names = new Map((await listOrganisations(db)).map((o) => [o.id, o.name]))
    return { rows: await list(db, organisationId), names }
  })
}
