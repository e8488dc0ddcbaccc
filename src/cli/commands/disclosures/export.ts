/**
 * `curriculum disclosures export`: every disclosure in a date range (of one organisation or
 * school, or all), a district's export; as CSV or JSON, streamed and audited (report-stream.ts).
 */
import type { Command } from 'commander'
import { systemClock } from '../../../clock.js'
import type { Audit } from '../../audit.js'
import { act } from '../../command-action.js'
import { ORG_FILTER, dateOption, defineCommand } from '../../options.js'
import { type CommandResult, plural, UsageError } from '../../output.js'
import { type OutputOptions, outputOptions, runReport } from './report-stream.js'

export function defineDisclosuresExport(disclosures: Command): void {
  const exported = defineCommand(
    disclosures,
    'export',
    'Every disclosure in a date range (of one organisation, or all), oldest first, streamed',
    [
      'curriculum disclosures export --since 2026-01-01 --until 2026-07-01 --output disclosures-2026h1.csv',
      'curriculum disclosures export --since 2026-01-01 --until 2026-02-01 --org "Acme Learning" --format json',
      'curriculum disclosures export --since 2025-09-01 --until 2026-07-01 --school "Lincoln Elementary" ' +
        '--output lincoln-2025-26.csv',
    ],
    { audit: 'disclosures.export' },
  )
    .requiredOption('--since <date>', 'from this date or timestamp (inclusive)', dateOption)
    .requiredOption('--until <date>', 'before this date or timestamp (exclusive)', dateOption)
    .option(...ORG_FILTER)
    .option(
      '--school <school>',
      "only the students who attend this school now, or did when erased (id, the district's id, or exact name)",
    )
  outputOptions(exported).action(act(exportDisclosures))
}

async function exportDisclosures(command: Command, audit: Audit): Promise<CommandResult> {
  const options = command.opts<OutputOptions & { since: number; until: number; org?: string; school?: string }>()
  if (options.until <= options.since) throw new UsageError('--until must be after --since')
  const since = new Date(options.since).toISOString()
  const until = new Date(options.until).toISOString()
  const { request, rows } = await runReport({
    audit,
    options,
    recorded: () => ({
      target: 'disclosures',
      detail: { since, until, organisation: options.org ?? null, school: options.school ?? null },
    }),
    request: async ({ storage }) => {
      const [{ findOrganisation }, { findSchool }] = await Promise.all([
        import('../../../storage/access-repository.js'),
        import('../../../storage/school-repository.js'),
      ])
      const organisation = options.org === undefined ? null : await findOrganisation(storage.db, options.org)
      const school = options.school === undefined ? null : await findSchool(storage.db, options.school)
      const { rangeReport } = await import('../../../cases/disclosure-report.js')
      return rangeReport(
        options,
        organisation === null ? null : { id: organisation.id, name: organisation.name },
        school === null ? null : { id: school.id, name: school.name },
        systemClock.now(),
      )
    },
  })
  const range = request.subject.kind === 'range' ? request.subject : undefined
  return {
    data: { file: options.output, format: options.format, rows, since, until, organisation: range?.organisation },
    text:
      options.output === undefined
        ? []
        : `wrote ${plural(rows, 'disclosure record')} from ${since} to ${until} to ${options.output}`,
  }
}
