/** `curriculum agreement list`: agreements with their state now. */
import type { Command } from 'commander'
import { systemClock } from '../../../clock.js'
import { act } from '../../command-action.js'
import { ORG_FILTER, defineCommand } from '../../options.js'
import { type CommandResult, tableOf } from '../../output.js'
import { listedByOrganisation } from '../../organisation-filter.js'
import { agreementJson, agreementState } from './views.js'

export function defineAgreementList(agreement: Command): void {
  defineCommand(agreement, 'list', 'List agreements with their state now: active, pending, expired or ended', [
    'curriculum agreement list',
    'curriculum agreement list --org "Acme Learning" --json',
  ])
    .option(...ORG_FILTER)
    .action(act(showAgreements))
}

async function showAgreements(command: Command): Promise<CommandResult> {
  const options = command.opts<{ org?: string }>()
  const now = systemClock.now()
  const { rows, names } = await listedByOrganisation(options.org, async (db, organisationId) =>
    (await import('../../../storage/access-repository.js')).listAgreements(db, organisationId),
  )
  return {
    data: { agreements: rows.map((row) => agreementJson(row, now, names.get(row.organisation_id))) },
    text: tableOf(
      'no agreements',
      ['ID', 'ORGANISATION', 'STATE', 'SIGNED', 'EXPIRES', 'ENDED', 'DOCUMENT', 'DATA', 'DELETE', 'PURPOSE'],
      rows,
      (row) => [
        row.id,
        names.get(row.organisation_id),
        agreementState(row, now),
        row.signed_at,
        row.expires_at,
        row.ended_at,
        row.document_ref,
        row.data_categories.replaceAll(' ', ','),
        `${row.disposition_days}d after end`,
        row.purpose === '' ? '(not recorded)' : row.purpose,
      ],
    ),
  }
}
