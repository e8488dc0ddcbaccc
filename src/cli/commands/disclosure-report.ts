/**
 * `curriculum disclosures report` (every disclosure of one student's data: what answers a
 * parent's request to inspect the record, or a GDPR access request) and `curriculum disclosures
 * export` (every disclosure in a date range, a district's export), as CSV or JSON, streamed so
 * that memory stays flat however many rows there are (cases/disclosure-report.ts).
 *
 * Either hands children's data to whoever runs it, so each is audited, and the audit row is
 * written before the first byte leaves: a report cut short by a failure was still recorded.
 */
import { once } from 'node:events'
import fs from 'node:fs'
import { Readable, type Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { type Command, Option } from 'commander'
import { systemClock } from '../../clock.js'
import { REPORT_FORMATS, type ReportFormat, type ReportRequest } from '../../cases/disclosure-report.js'
import { act } from '../command-action.js'
import type { Audit } from '../audit.js'
import { dateOption, defineCommand, uuidOption } from '../options.js'
import { CliError, plural, UsageError } from '../output.js'
import { type Session, withStorage } from '../storage-session.js'

interface OutputOptions {
  format: ReportFormat
  output?: string
  json?: boolean
}

function outputOptions(command: Command): Command {
  return command
    .addOption(new Option('--format <format>', 'csv or json').choices(REPORT_FORMATS).default('csv'))
    .option('--output <file>', 'write it to this new file (never over an existing one) instead of standard output')
}

/** Without --output the report is stdout, so there is no room for --json's own document. */
function checkOutput(options: OutputOptions): void {
  if (options.json === true && options.output === undefined)
    throw new UsageError('--json prints a summary of a report written with --output <file>; add --output')
}

/** Opens the file before anything is audited or read, so a path that cannot be written changes nothing. */
async function openOutput(file: string | undefined): Promise<{ stream: Writable; remove: () => void } | undefined> {
  if (file === undefined) return undefined
  // Children's data: readable by its owner only, and never written over another file.
  const stream = fs.createWriteStream(file, { flags: 'wx', mode: 0o600 })
  try {
    await once(stream, 'open')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new CliError(
      code === 'EEXIST'
        ? `${file} already exists: choose a new file (a report never replaces one)`
        : `cannot write ${file}: ${(error as Error).message}`,
    )
  }
  return { stream, remove: () => fs.rmSync(file, { force: true }) }
}

interface Run {
  audit: Audit
  options: OutputOptions
  /** The audit row's target and detail, from the request as built (a student found by the district's id). */
  recorded: (request: ReportRequest) => { target: string; detail: Record<string, unknown> }
  /** Builds the request once the database is open; may refuse (an unknown organisation). */
  request: (session: Session) => Promise<ReportRequest>
}

async function runReport({ audit, options, recorded, request }: Run) {
  checkOutput(options)
  return withStorage(async (session) => {
    const { reportChunks } = await import('../../cases/disclosure-report.js')
    const built = await request(session)
    const output = await openOutput(options.output)
    const tally = { rows: 0 }
    const { target, detail } = recorded(built)
    try {
      await audit.record(session.storage.db, target, {
        ...detail,
        format: options.format,
        output: options.output ?? 'stdout',
      })
      // At most one chunk (a batch of rows) waits to be written.
      const chunks = reportChunks(session.storage.db, built, options.format, tally)
      const source = Readable.from(chunks, { highWaterMark: 1 })
      if (output === undefined) await pipeline(source, process.stdout, { end: false })
      else await pipeline(source, output.stream)
    } catch (error) {
      output?.stream.destroy()
      output?.remove()
      throw error
    }
    return { request: built, rows: tally.rows }
  })
}

export function registerDisclosureReports(disclosures: Command): void {
  const report = defineCommand(
    disclosures,
    'report',
    "Every disclosure of one student's data, oldest first: who, when, what and under which agreement",
    [
      'curriculum disclosures report --student 11111111-1111-4111-8111-111111111111 --format csv > report.csv',
      'curriculum disclosures report --student 11111111-1111-4111-8111-111111111111 --format json ' +
        '--output report.json --json',
      'curriculum disclosures report --external-id stu-20417 --format csv --output report.csv',
    ],
    { audit: 'disclosures.report' },
  )
    .option('--student <uuid>', 'the student, by id', uuidOption)
    .option('--external-id <id>', "the student, by its id in the district's system (OneRoster sourcedId)")
  outputOptions(report).action(
    act(async (command, audit) => {
      const options = command.opts<OutputOptions & { student?: string; externalId?: string }>()
      if ((options.student === undefined) === (options.externalId === undefined))
        throw new UsageError('name the student with exactly one of --student <uuid> and --external-id <id>')
      const named = options.student ?? `external id ${options.externalId}`
      const { request, rows } = await runReport({
        audit,
        options,
        recorded: (built) => {
          const studentId = built.filter.studentId!
          return {
            target: `student:${studentId}`,
            detail: {
              student: studentId,
              ...(options.externalId === undefined ? {} : { externalId: options.externalId }),
            },
          }
        },
        request: async ({ storage }) => {
          const { reportStudent, studentIdByExternalId } = await import('../../storage/disclosure-report-repository.js')
          const studentId = options.student ?? (await studentIdByExternalId(storage.db, options.externalId!))
          // Once erased, a student is known by our id only: the district's id went with the name.
          if (studentId === undefined)
            throw new CliError(
              `no stored student has the external id ${options.externalId}; ` +
                'an erased student is reported by the id the erasure printed (--student <uuid>)',
            )
          const { studentReport } = await import('../../cases/disclosure-report.js')
          return studentReport(await reportStudent(storage.db, studentId), systemClock.now())
        },
      })
      const student = request.subject.kind === 'student' ? request.subject.student : undefined
      return {
        data: { file: options.output, format: options.format, rows, student },
        // Without --output the report itself was the output.
        text:
          options.output === undefined
            ? []
            : `wrote ${plural(rows, 'disclosure record')} of student ${student?.id ?? named} to ${options.output}`,
      }
    }),
  )

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
    .option('--org <organisation>', 'only this organisation (id or exact name)')
    .option(
      '--school <school>',
      "only the students who attend this school now, or did when erased (id, the district's id, or exact name)",
    )
  outputOptions(exported).action(
    act(async (command, audit) => {
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
            import('../../storage/access-repository.js'),
            import('../../storage/school-repository.js'),
          ])
          const organisation = options.org === undefined ? null : await findOrganisation(storage.db, options.org)
          const school = options.school === undefined ? null : await findSchool(storage.db, options.school)
          const { rangeReport } = await import('../../cases/disclosure-report.js')
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
    }),
  )
}
