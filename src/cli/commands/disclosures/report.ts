/**
 * `curriculum disclosures report`: every disclosure of one student's data, what answers a parent's
 * request to inspect the record, or a GDPR access request; as CSV or JSON, streamed and audited
 * (report-stream.ts).
 */
import type { Command } from 'commander'
import { systemClock } from '../../../clock.js'
import type { Audit } from '../../audit.js'
import { act } from '../../command-action.js'
import { defineCommand, uuidOption } from '../../options.js'
import { CliError, type CommandResult, plural, UsageError } from '../../output.js'
import { type OutputOptions, outputOptions, runReport } from './report-stream.js'

export function defineDisclosuresReport(disclosures: Command): void {
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
  outputOptions(report).action(act(studentDisclosures))
}

async function studentDisclosures(command: Command, audit: Audit): Promise<CommandResult> {
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
      const { reportStudent, studentIdByExternalId } = await import('../../../storage/disclosure-report-repository.js')
      const studentId = options.student ?? (await studentIdByExternalId(storage.db, options.externalId!))
      // Once erased, a student is known by our id only: the district's id went with the name.
      if (studentId === undefined)
        throw new CliError(
          `no stored student has the external id ${options.externalId}; ` +
            'an erased student is reported by the id the erasure printed (--student <uuid>)',
        )
      const { studentReport } = await import('../../../cases/disclosure-report.js')
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
}
