/** `curriculum org list`: every organisation. */
import type { Command } from 'commander'
import { act } from '../../command-action.js'
import { defineCommand } from '../../options.js'
import { type CommandResult, tableOf } from '../../output.js'
import { withStorage } from '../../storage-session.js'
import { organisationJson } from './views.js'

export function defineOrgList(org: Command): void {
  defineCommand(org, 'list', 'List organisations', ['curriculum org list', 'curriculum org list --json']).action(
    act(listOrganisations),
  )
}

async function listOrganisations(): Promise<CommandResult> {
  const rows = await withStorage(async ({ storage }) =>
    (await import('../../../storage/access-repository.js')).listOrganisations(storage.db),
  )
  return {
    data: { organisations: rows.map(organisationJson) },
    text: tableOf('no organisations', ['ID', 'NAME', 'STATUS', 'CREATED'], rows, (row) => [
      row.id,
      row.name,
      row.status,
      row.created_at,
    ]),
  }
}
