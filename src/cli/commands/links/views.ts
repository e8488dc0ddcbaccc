/** How the `links` commands name an organisation, in their text and in their --json. */
import type { OrganisationRow } from '../../../storage/tables.js'

export const named = (o: Pick<OrganisationRow, 'id' | 'name'>) => `${o.name} (${o.id})`
export const organisationJson = (o: Pick<OrganisationRow, 'id' | 'name'>) => ({ id: o.id, name: o.name })
