/**
 * What `disclosures report` and `disclosures export` share: the --format and --output options, and
 * the run that audits the report and then streams it, so that memory stays flat however many rows
 * there are (cases/disclosure-report.ts).
 *
 * Either hands children's data to whoever runs it, so each is audited, and the audit row is
 * written before the first byte leaves: a report cut short by a failure was still recorded.
 */
import { once } from 'node:events'
import fs from 'node:fs'
import { Readable, type Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { type Command, Option } from 'commander'
import { REPORT_FORMATS, type ReportFormat, type ReportRequest } from '../../../cases/disclosure-report.js'
import type { Audit } from '../../audit.js'
import { outputFileError, UsageError } from '../../output.js'
import { type Session, withStorage } from '../../storage-session.js'

export interface OutputOptions {
  format: ReportFormat
  output?: string
  json?: boolean
}

export function outputOptions(command: Command): Command {
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
    throw outputFileError(file, error, 'report')
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

export async function runReport({ audit, options, recorded, request }: Run) {
  checkOutput(options)
  return withStorage(async (session) => {
    const { reportChunks } = await import('../../../cases/disclosure-report.js')
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
