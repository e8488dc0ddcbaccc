/** An organisation as the `org` commands print it with --json. */
import type { OrganisationRow } from '../../../storage/tables.js'

export function organisationJson(row: OrganisationRow) {
  return { id: row.id, name: row.name, status: row.status, createdAt: row.created_at }
}
