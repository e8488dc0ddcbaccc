/**
 * `curriculum disclosures`: the log of who reached which student's data, when, with which
 * key, and what happened, as student-privacy law asks an operator to be able to show.
 */
import { type Command, Option } from 'commander'
import type { DisclosureRow } from '../../../storage/tables.js'
import {
  DISCLOSURE_ACTIONS,
  DISCLOSURE_OUTCOMES,
  type DisclosureAction,
  type DisclosureFilter,
  type DisclosureOutcome,
  pageDisclosures,
} from '../../../storage/disclosure-log.js'
import { act } from '../../command-action.js'
import { ORG_FILTER, cursorOption, dateOption, defineCommand, limitOption, uuidOption } from '../../options.js'
import { type CommandResult, plural, table } from '../../output.js'
import { withStorage } from '../../storage-session.js'
import { defineDisclosuresExport } from './export.js'
import { defineDisclosuresReport } from './report.js'

interface Options {
  student?: string
  org?: string
  key?: string
  action?: DisclosureAction
  outcome?: DisclosureOutcome
  since?: number
  until?: number
  limit: number
  before?: number
}

function disclosureJson(row: DisclosureRow) {
  return {
    at: row.at,
    requestId: row.request_id,
    keyId: row.key_id,
    organisationId: row.organisation_id,
    studentId: row.student_id,
    action: row.action,
    outcome: row.outcome,
  }
}

export function defineDisclosures(program: Command): void {
  const disclosures = defineCommand(
    program,
    'disclosures',
    'List disclosure records (newest first): which key reached which student, when, and the outcome',
    [
      'curriculum disclosures --student 11111111-1111-4111-8111-111111111111 --since 2026-01-01',
      'curriculum disclosures --org "Acme Learning" --action progress.read --limit 50 --json',
      'curriculum disclosures --org "Acme Learning" --limit 50 --before 81234',
      'curriculum disclosures report --student 11111111-1111-4111-8111-111111111111 --output report.csv',
    ],
  )
    // Its options before `report` or `export` are its own; after, theirs.
    .enablePositionalOptions()
    .option('--student <uuid>', 'only this student', uuidOption)
    .option(...ORG_FILTER)
    .option('--key <keyId>', 'only this key id (as `key list` shows it)')
    .addOption(new Option('--action <action>', 'only this action').choices(DISCLOSURE_ACTIONS))
    .addOption(new Option('--outcome <outcome>', 'only this outcome').choices(DISCLOSURE_OUTCOMES))
    .option('--since <date>', 'from this date or timestamp (inclusive)', dateOption)
    .option('--until <date>', 'before this date or timestamp (exclusive)', dateOption)
    .option('--limit <n>', 'at most this many records, 1 to 100000', limitOption, 1000)
    .option('--before <next>', 'continue a listing: the "next" it printed (older records)', cursorOption)
    .action(act(listDisclosures))
  defineDisclosuresReport(disclosures)
  defineDisclosuresExport(disclosures)
}

async function listDisclosures(command: Command): Promise<CommandResult> {
  const options = command.opts<Options>()
  const { rows, next } = await withStorage(async ({ storage }) => {
    const filter: DisclosureFilter = {}
    if (options.student !== undefined) filter.studentId = options.student
    if (options.org !== undefined)
      filter.organisationId = (
        await (await import('../../../storage/access-repository.js')).findOrganisation(storage.db, options.org)
      ).id
    if (options.key !== undefined) filter.keyId = options.key
    if (options.action !== undefined) filter.action = options.action
    if (options.outcome !== undefined) filter.outcome = options.outcome
    if (options.since !== undefined) filter.since = options.since
    if (options.until !== undefined) filter.until = options.until
    return pageDisclosures(storage.db, filter, options.limit, options.before)
  })
  const shown =
    next === null
      ? plural(rows.length, 'record')
      : `${plural(rows.length, 'record')}; older ones follow: add --before ${next}`
  return {
    data: { disclosures: rows.map(disclosureJson), next },
    text:
      rows.length === 0
        ? 'no disclosure records match'
        : [
            ...table(
              ['AT', 'ACTION', 'OUTCOME', 'STUDENT', 'ORGANISATION', 'KEY', 'REQUEST'],
              rows.map((row) => [
                row.at,
                row.action,
                row.outcome,
                row.student_id,
                row.organisation_id,
                row.key_id,
                row.request_id,
              ]),
            ),
            shown,
          ],
  }
}
