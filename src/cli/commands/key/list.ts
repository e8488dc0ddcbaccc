/** `curriculum key list`: API keys and their state, never the keys themselves. */
import type { Command } from 'commander'
import { systemClock } from '../../../clock.js'
import { keyRowState } from '../../../domain/api-key.js'
import { act } from '../../command-action.js'
import { ORG_FILTER, defineCommand } from '../../options.js'
import { type CommandResult, tableOf } from '../../output.js'
import { listedByOrganisation } from '../../organisation-filter.js'
import { keyJson } from './views.js'

export function defineKeyList(key: Command): void {
  defineCommand(key, 'list', 'List API keys (never the keys themselves)', [
    'curriculum key list',
    'curriculum key list --org "Acme Learning" --json',
  ])
    .option(...ORG_FILTER)
    .action(act(listKeys))
}

async function listKeys(command: Command): Promise<CommandResult> {
  const options = command.opts<{ org?: string }>()
  const now = systemClock.now()
  const { rows, names } = await listedByOrganisation(options.org, async (db, organisationId) =>
    (await import('../../../storage/access-repository.js')).listApiKeys(db, organisationId),
  )
  return {
    data: { keys: rows.map((row) => keyJson(row, names.get(row.organisation_id), now)) },
    text: tableOf(
      'no keys',
      ['ID', 'PREFIX', 'NAME', 'ORGANISATION', 'SCOPES', 'STATE', 'CREATED', 'EXPIRES', 'REVOKED', 'LAST USED'],
      rows,
      (row) => [
        row.id,
        `${row.display_prefix}…`,
        row.name,
        names.get(row.organisation_id),
        row.scopes.replaceAll(' ', ','),
        keyRowState(row, now),
        row.created_at,
        row.expires_at,
        row.revoked_at,
        row.last_used_at,
      ],
    ),
  }
}
