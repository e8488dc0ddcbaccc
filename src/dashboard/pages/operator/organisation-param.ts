/** The partner organisation an operator page's `:id` names; anything else is the dashboard's 404. */
import type { FastifyRequest } from 'fastify'
import { NotFoundError } from '../../../domain/errors.js'
import { UUID } from '../../../domain/uuid.js'
import { organisationById } from '../../../storage/access-repository.js'
import type { OrganisationRow } from '../../../storage/tables.js'
import type { DashboardContext } from '../../dashboard-context.js'

export async function organisationParam(context: DashboardContext, request: FastifyRequest): Promise<OrganisationRow> {
  const { id } = request.params as { id: string }
  if (!UUID.test(id)) throw new NotFoundError(`no organisation ${id}`)
  const row = await organisationById(context.storage.db, id, 'partner')
  if (row === undefined) throw new NotFoundError(`no organisation ${id}`)
  return row
}
