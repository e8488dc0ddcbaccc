/** `curriculum schools list`: every school, with its students and its shares in force. */
import type { Command } from 'commander'
import { act } from '../../command-action.js'
import { defineCommand } from '../../options.js'
import { type CommandResult, tableOf } from '../../output.js'
import { withStorage } from '../../storage-session.js'

export function defineSchoolsList(schools: Command): void {
  defineCommand(schools, 'list', 'List the schools, with how many students attend each and its shares in force', [
    'curriculum schools list',
    'curriculum schools list --json',
  ]).action(act(listSchools))
}

async function listSchools(): Promise<CommandResult> {
  const schools = await withStorage(async ({ storage }) =>
    (await import('../../../storage/school-repository.js')).listSchools(storage.db),
  )
  return {
    data: { schools },
    text: tableOf(
      'no schools',
      ['ID', 'NAME', 'IDENTIFIER', 'EXTERNAL ID', 'SOURCE', 'STUDENTS', 'SHARES'],
      schools,
      (s) => [s.id, s.name, s.identifier, s.externalId, s.source, String(s.students), String(s.shares)],
    ),
  }
}
