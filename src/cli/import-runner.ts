/**
 * The shape every import follows, so students, links and progress behave alike:
 *
 * 1. read the file as a stream and check every row, collecting every problem with its line;
 * 2. in one transaction, check the rows against stored data (are their students stored?);
 * 3. if anything at all is wrong, roll back and report every problem; otherwise write all rows
 *    in that same transaction.
 *
 * An import is therefore all or nothing: a file is never left half-applied, and an operator
 * fixes a whole file in one pass instead of one error per run.
 */
import fs from 'node:fs'
import type { Kysely } from 'kysely'
import type { Database } from '../storage/database.js'
import { inTransaction } from '../storage/transaction.js'
import { UUID } from './options.js'
import { CliError, plural, type Problem } from './output.js'
import { count, ProgressLine } from './progress-bar.js'
import { fieldValue, readRecords, type RecordFormat, type RecordValues } from './records.js'

/** One row as a spec's `parse` sees it. */
export interface RowInput {
  readonly line: number
  readonly format: RecordFormat
  /** The field's value, or undefined when the row lacks it. */
  value(field: string): unknown
  report(field: string, message: string): void
}

export interface ImportSpec<Row, Context> {
  /** What one row is, for messages: "student", "link". */
  noun: string
  /** Every accepted field, in the order shown in messages. */
  fields: readonly string[]
  /** Fields a row may leave out; in CSV, columns the header may leave out. */
  optional?: readonly string[]
  /** Why any other field is refused. */
  unknownField: string
  /** Loads what `parse` needs from storage, once, before reading the file. */
  prepare(db: Kysely<Database>): Promise<Context>
  /** The row in its stored form, or null after reporting what is wrong with it. */
  parse(row: RowInput, context: Context): Row | null
  /** Identity within the file; a second row with the same key is reported as a duplicate. */
  key(row: Row): string
  duplicate(row: Row, firstLine: number): { field: string; message: string }
  /**
   * The student a row writes or refers to: the field, and how to read it from a valid row. No
   * import ever touches a sandbox (synthetic) student, and with `mustExist` the student must be
   * stored already. Rows with other problems are checked too, so one run reports everything.
   */
  student?: { field: string; of(row: Row): string; mustExist: boolean }
  write(db: Kysely<Database>, rows: readonly Row[], now: number, progress: (done: number) => void): Promise<void>
}

export interface ImportSummary {
  file: string
  format: RecordFormat
  rows: number
}

interface Collected<Row> {
  rows: Row[]
  lines: number[]
  problems: Problem[]
  /** Students named by rows that were refused for another reason, to be checked all the same. */
  otherStudents: { id: string; line: number }[]
}

const REPORT_EVERY = 1000

async function collect<Row, Context>(spec: ImportSpec<Row, Context>, file: string, format: RecordFormat, context: Context, bar: ProgressLine): Promise<Collected<Row>> {
  const accepted = new Set(spec.fields)
  const required = spec.fields.filter((field) => !spec.optional?.includes(field))
  const rows: Row[] = []
  const lines: number[] = []
  const problems: Problem[] = []
  const otherStudents: { id: string; line: number }[] = []
  const firstLineOf = new Map<string, number>()
  let sawHeader = false
  let seen = 0

  for await (const batch of readRecords(file, format)) {
    for (const item of batch) {
      if (item.kind === 'problem') {
        problems.push({ file, line: item.line, message: item.message })
        continue
      }
      if (item.kind === 'header') {
        sawHeader = true
        const names = new Set<string>()
        for (const name of item.fields) {
          if (names.has(name)) problems.push({ file, line: item.line, field: name, message: 'the column appears twice in the header' })
          else if (!accepted.has(name)) problems.push({ file, line: item.line, field: name, message: spec.unknownField })
          names.add(name)
        }
        const missing = required.filter((field) => !names.has(field))
        for (const field of missing) problems.push({ file, line: item.line, field, message: `the header has no ${field} column; columns: ${spec.fields.join(',')}` })
        // Without a required column every row would repeat the same complaint; the header one says it all.
        if (missing.length > 0) return { rows, lines, problems, otherStudents }
        continue
      }

      const before = problems.length
      const { line, values } = item
      if (format === 'jsonl') reportUnknownFields(values, accepted, spec.unknownField, (field, message) => problems.push({ file, line, field, message }))
      const input: RowInput = {
        line,
        format,
        value: (field) => fieldValue(values, field),
        report: (field, message) => problems.push({ file, line, field, message }),
      }
      const row = spec.parse(input, context)
      if (row !== null && problems.length === before) {
        const key = spec.key(row)
        const firstLine = firstLineOf.get(key)
        if (firstLine !== undefined) {
          problems.push({ file, line, ...spec.duplicate(row, firstLine) })
        } else {
          firstLineOf.set(key, line)
          rows.push(row)
          lines.push(line)
        }
      } else if (spec.student !== undefined) {
        const id = input.value(spec.student.field)
        if (typeof id === 'string' && UUID.test(id.trim())) otherStudents.push({ id: id.trim().toLowerCase(), line })
      }
      if (++seen % REPORT_EVERY === 0) bar.update(`validated ${count(seen)} rows`)
    }
  }
  if (format === 'csv' && !sawHeader && problems.length === 0) {
    problems.push({ file, line: 1, message: `the file is empty; a CSV import starts with a header row: ${spec.fields.join(',')}` })
  }
  bar.update(`validated ${count(seen)} rows`, true)
  return { rows, lines, problems, otherStudents }
}

function reportUnknownFields(values: RecordValues, accepted: ReadonlySet<string>, message: string, report: (field: string, message: string) => void): void {
  for (const field of Object.keys(values)) if (!accepted.has(field)) report(field, message)
}

/**
 * Rows naming a student that is not stored (when it must be), or a sandbox student: a sandbox
 * student's row holds a synthetic name that test keys read without any agreement, so an
 * import that wrote a real child's name there would disclose it.
 */
async function studentProblems<Row>(
  db: Kysely<Database>,
  file: string,
  student: NonNullable<ImportSpec<Row, unknown>['student']>,
  rows: readonly Row[],
  lines: readonly number[],
  others: readonly { id: string; line: number }[],
): Promise<Problem[]> {
  const ids = new Set(rows.map(student.of))
  for (const other of others) ids.add(other.id)
  const { storedStudents } = await import('../storage/student-import-repository.js')
  const found = await storedStudents(db, [...ids])
  const problems: Problem[] = []
  const report = (id: string, line: number) => {
    const stored = found.get(id)
    if (stored === undefined) {
      if (student.mustExist) problems.push({ file, line, field: student.field, message: `no student ${id}; import the student first` })
    } else if (stored.sandbox) {
      problems.push({ file, line, field: student.field, message: `student ${id} is a sandbox (synthetic) student; imports never change sandbox students` })
    }
  }
  rows.forEach((row, index) => report(student.of(row), lines[index]!))
  for (const other of others) report(other.id, other.line)
  return problems
}

/** Runs one import; throws a CliError carrying every problem when anything is wrong, having written nothing. */
export async function runImport<Row, Context>(
  spec: ImportSpec<Row, Context>,
  db: Kysely<Database>,
  file: string,
  format: RecordFormat,
  now: number,
): Promise<ImportSummary> {
  if (!fs.existsSync(file) || !fs.statSync(file).isFile()) throw new CliError(`no file "${file}"`)
  const bar = new ProgressLine()
  try {
    const context = await spec.prepare(db)
    const { rows, lines, problems, otherStudents } = await collect(spec, file, format, context, bar)
    await inTransaction(db, async (trx) => {
      if (spec.student !== undefined) {
        bar.update('checking students against the database', true)
        // A loop, not push(...): spreading a million problems would overflow the call stack.
        for (const problem of await studentProblems(trx, file, spec.student, rows, lines, otherStudents)) problems.push(problem)
      }
      if (problems.length > 0) {
        // Stable sort: problems of one line stay in field order.
        problems.sort((a, b) => a.line - b.line)
        throw new CliError(`${file}: ${plural(problems.length, 'problem')}; nothing was imported`, problems)
      }
      const total = count(rows.length)
      await spec.write(trx, rows, now, (done) => bar.update(`written ${count(done)}/${total}`, done === rows.length))
    })
    return { file, format, rows: rows.length }
  } finally {
    bar.clear()
  }
}
