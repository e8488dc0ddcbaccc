/** `curriculum org create`: a partner organisation (cases/organisations.ts). */
import type { Command } from 'commander'
import { systemClock } from '../../../clock.js'
import type { Audit } from '../../audit.js'
import { act } from '../../command-action.js'
import { defineCommand } from '../../options.js'
import type { CommandResult } from '../../output.js'
import { organisationJson } from './views.js'

export function defineOrgCreate(org: Command): void {
  defineCommand(org, 'create', 'Create a partner organisation', ['curriculum org create --name "Acme Learning"'], {
    audit: 'organisation.create',
  })
    .requiredOption('--name <name>', 'organisation name, unique, 1 to 120 characters')
    .action(act(createOrganisation))
}

async function createOrganisation(command: Command, audit: Audit): Promise<CommandResult> {
  const { name } = command.opts<{ name: string }>()
  const row = await audit.change(async ({ db }) => {
    const { addOrganisation } = await import('../../../cases/organisations.js')
    const row = await addOrganisation(db, name, systemClock.now())
    return { value: row, target: `organisation:${row.id}`, changed: { name: row.name, kind: row.kind } }
  })
  return { data: { organisation: organisationJson(row) }, text: `created organisation ${row.name} (${row.id})` }
}
