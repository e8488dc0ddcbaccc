/** `curriculum schools add`: a school added by hand (cases/schools.ts). */
import type { Command } from 'commander'
import { systemClock } from '../../../clock.js'
import type { SchoolRow } from '../../../storage/tables.js'
import type { Audit } from '../../audit.js'
import { act } from '../../command-action.js'
import { defineCommand } from '../../options.js'
import type { CommandResult } from '../../output.js'

export function defineSchoolsAdd(schools: Command): void {
  defineCommand(
    schools,
    'add',
    'Add a school by hand (a roster import brings schools with it)',
    [
      'curriculum schools add --name "Hillside Primary"',
      'curriculum schools add --name "Oakwood High" --identifier OH --json',
    ],
    { audit: 'schools.add' },
  )
    .requiredOption('--name <name>', 'the school name, unique, 1 to 120 characters')
    .option('--identifier <code>', "the school's own code, shown beside its name")
    .action(act(addSchool))
}

async function addSchool(command: Command, audit: Audit): Promise<CommandResult> {
  const { name, identifier } = command.opts<{ name: string; identifier?: string }>()
  const row = await audit.change(async ({ db }) => {
    const { createSchool } = await import('../../../cases/schools.js')
    const row = await createSchool(db, { name, identifier: identifier ?? null }, systemClock.now())
    return { value: row, target: `school:${row.id}`, changed: { name: row.name, identifier: row.identifier } }
  })
  return { data: { school: schoolJson(row) }, text: `added school ${row.name} (${row.id})` }
}

function schoolJson(row: SchoolRow) {
  return {
    id: row.id,
    name: row.name,
    identifier: row.identifier,
    externalId: row.external_id,
    createdAt: row.created_at,
  }
}
