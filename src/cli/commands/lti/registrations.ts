/** `curriculum lti registrations`: every learning platform registered, with its state and deployments. */
import type { Command } from 'commander'
import { act } from '../../command-action.js'
import { defineCommand } from '../../options.js'
import { type CommandResult, tableOf } from '../../output.js'
import { withStorage } from '../../storage-session.js'

export function defineLtiRegistrations(lti: Command): void {
  defineCommand(
    lti,
    'registrations',
    'List the learning platforms registered (LTI): state, organisation, product, issuer, client id, deployments',
    ['curriculum lti registrations', 'curriculum lti registrations --json'],
  ).action(act(listRegistrations))
}

async function listRegistrations(): Promise<CommandResult> {
  const summaries = await withStorage(async ({ storage }) =>
    (await import('../../../storage/lti-registration-list-repository.js')).registrationSummaries(storage.db),
  )
  const registrations = summaries.map(({ registration: r, organisationName, schoolName, deployments }) => ({
    id: r.id,
    name: r.name,
    status: r.status,
    method: r.method,
    organisation: { id: r.organisation_id, name: organisationName },
    school: r.school_id === null ? null : { id: r.school_id, name: schoolName },
    product: r.product,
    issuer: r.issuer,
    clientId: r.client_id,
    deployments,
    scopes: r.scopes === '' ? [] : r.scopes.split(' '),
    createdAt: r.created_at,
    activatedAt: r.activated_at,
    deactivatedAt: r.deactivated_at,
  }))
  return {
    data: { registrations },
    text: tableOf(
      'no LTI registrations',
      ['ID', 'NAME', 'STATE', 'ORGANISATION', 'ISSUER', 'CLIENT ID', 'DEPLOYMENTS'],
      registrations,
      (r) => [r.id, r.name, r.status, r.organisation.name, r.issuer, r.clientId, r.deployments.join(' ')],
    ),
  }
}
