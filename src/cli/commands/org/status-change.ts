/**
 * What `org suspend` and `org reinstate` share: setting the organisation's status, audited
 * (cases/organisations.ts); setting the status it has already changes nothing.
 */
import type { OrganisationStatus } from '../../../storage/access-repository.js'
import type { Audit } from '../../audit.js'
import type { CommandResult } from '../../output.js'
import { organisationJson } from './views.js'

export async function changeStatus(audit: Audit, idOrName: string, status: OrganisationStatus): Promise<CommandResult> {
  const { organisation, changed } = await audit.change(async ({ db }) => {
    const [{ findOrganisation }, { changeOrganisationStatus }] = await Promise.all([
      import('../../../storage/access-repository.js'),
      import('../../../cases/organisations.js'),
    ])
    const found = await findOrganisation(db, idOrName)
    const value = await changeOrganisationStatus(db, found.id, status)
    return {
      value,
      target: `organisation:${found.id}`,
      changed: { organisation: found.name, status: value.changed ? { from: found.status, to: status } : null },
    }
  })
  return {
    data: { organisation: organisationJson(organisation), changed },
    text: changed
      ? `${organisation.name} (${organisation.id}) is now ${status}`
      : `${organisation.name} (${organisation.id}) was already ${status}`,
  }
}
