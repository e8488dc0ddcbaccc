/**
 * The shape every import follows, so students, links and progress behave alike:
 *
 * 1. read the file as a stream and check every row, collecting every problem with its line;
 *    checked rows go to a staging table (import-staging.ts), not into memory;
 * 2. check the staged rows against each other (duplicates) and against stored data (are their
 *    students stored? is any a sandbox student?);
 * 3. if anything at all is wrong, report every problem and write nothing; otherwise write the
 *    rows in batches in key order, each committed on its own (on SQLite sized to hold the write
 *    lock about 20 ms, imports/write-batch-size.ts).
 *
 * The audit row (what was written, how many rows) is written in the last batch's transaction,
 * so a completed import and its record commit together; an import whose writing stopped records
 * what it had written.
 *
 * Validation is all or nothing: a file with any problem changes nothing, and an operator fixes
 * a whole file in one pass instead of one error per run. Writing is not one transaction: on
 * SQLite a transaction holds the only write lock, and a million-row import in one transaction
 * held it for so long that every student request meanwhile (each writes its disclosure record)
 * failed with 503 (figures: docs/performance.md).
 * Short batches with a pause after each let the service's writes in between. A killed import
 * therefore leaves part of the file written; every import adds or updates rows by id, so
 * running the same file again completes it and changes nothing twice.
 */
import fs from 'node:fs'
import type { Kysely } from 'kysely'
import type { Database } from '../storage/tables.js'
import type { Engine } from '../storage/connection.js'
import type { PendingChange } from './confirm.js'
import { ImportStaging } from './import-staging.js'
import { UUID } from '../domain/uuid.js'
import { pauseAfterBatch, WriteBatchSize } from '../imports/write-batch-size.js'
import { CliError, plural, type InputProblem } from './output.js'
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
  /** The audit log's action and target for this import. */
  audit: { action: string; target: string }
  /** Options of this import's command beyond the shared ones; their values reach `prepare`. */
  options?: readonly { flags: string; description: string }[]
  /** Every accepted field, in the order shown in messages. */
  fields: readonly string[]
  /** Fields a row may leave out; in CSV, columns the header may leave out. */
  optional?: readonly string[]
  /** Why any other field is refused. */
  unknownField: string
  /** Loads what `parse` and `write` need, once, before reading the file. */
  prepare(db: Kysely<Database>, options: Readonly<Record<string, unknown>>, run: ImportRun): Promise<Context>
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
  write(
    db: Kysely<Database>,
    rows: readonly Row[],
    now: number,
    progress: (done: number) => void,
    context: Context,
  ): Promise<void>
  /**
   * For an import that can end partners' access (students leaving schools): what its checked rows
   * would end, read before anything is written, for the command to show and ask about (confirm.ts).
   */
  ending?: {
    /** What --yes does, for its help. */
    yes: string
    preview(db: Kysely<Database>, rows: AsyncIterable<Row[]>, run: ImportRun): Promise<PendingChange>
  }
}

/** The run an import's `prepare` serves. */
export interface ImportRun {
  file: string
  /** Who runs it, as the audit log names them. */
  actor: string | null
}

export interface ImportSummary {
  file: string
  format: RecordFormat
  rows: number
}

export interface ImportRequest {
  file: string
  format: RecordFormat
  now: number
  /** Values of the spec's own options. */
  options?: Readonly<Record<string, unknown>>
  /** Who runs it, as the audit log names them. */
  actor?: string
  /** Writes the audit row with `db`, a transaction that writes rows of the import. */
  record(db: Kysely<Database>, changed: ImportChange): Promise<void>
  /** For a spec with `ending`: shows what the import would end and says whether to write it. */
  confirm?(change: PendingChange): Promise<boolean>
}

/** What an import changed, for the audit log. */
export interface ImportChange {
  file: string
  format: RecordFormat
  /** Rows written. */
  rows: number
  /** Rows the file holds: more than `rows` when writing stopped. */
  total: number
  complete: boolean
}

const REPORT_EVERY = 1000

/**
 * Rows per write transaction on PostgreSQL, where a transaction locks only the rows it writes;
 * on SQLite the size follows the time the lock is held (WriteBatchSize).
 */
const POSTGRES_BATCH = 2000

/** Reads, checks and stages every row; returns the problems found row by row. */
async function stage<Row, Context>(
  spec: ImportSpec<Row, Context>,
  staging: ImportStaging,
  file: string,
  format: RecordFormat,
  context: Context,
  bar: ProgressLine,
): Promise<{ problems: InputProblem[]; accepted: number }> {
  const accepted = new Set(spec.fields)
  const required = spec.fields.filter((field) => !spec.optional?.includes(field))
  const problems: InputProblem[] = []
  let sawHeader = false
  let seen = 0
  let kept = 0

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
          if (names.has(name))
            problems.push({ file, line: item.line, field: name, message: 'the column appears twice in the header' })
          else if (!accepted.has(name))
            problems.push({ file, line: item.line, field: name, message: spec.unknownField })
          names.add(name)
        }
        const missing = required.filter((field) => !names.has(field))
        for (const field of missing)
          problems.push({
            file,
            line: item.line,
            field,
            message: `the header has no ${field} column; columns: ${spec.fields.join(',')}`,
          })
        // Without a required column every row would repeat the same complaint; the header one says it all.
        if (missing.length > 0) return { problems, accepted: kept }
        continue
      }

      const before = problems.length
      const { line, values } = item
      if (format === 'jsonl')
        reportUnknownFields(values, accepted, spec.unknownField, (field, message) =>
          problems.push({ file, line, field, message }),
        )
      const input: RowInput = {
        line,
        format,
        value: (field) => fieldValue(values, field),
        report: (field, message) => problems.push({ file, line, field, message }),
      }
      const row = spec.parse(input, context)
      if (row !== null && problems.length === before) {
        await staging.add({
          line,
          key: spec.key(row),
          student: spec.student?.of(row) ?? null,
          row: JSON.stringify(row),
        })
        kept++
      } else if (spec.student !== undefined) {
        // A refused row's student is checked all the same, so that one run reports everything.
        const id = input.value(spec.student.field)
        if (typeof id === 'string' && UUID.test(id.trim()))
          await staging.add({ line, key: null, student: id.trim().toLowerCase(), row: null })
      }
      if (++seen % REPORT_EVERY === 0) bar.update(`validated ${count(seen)} rows`)
    }
  }
  await staging.flush()
  if (format === 'csv' && !sawHeader && problems.length === 0) {
    problems.push({
      file,
      line: 1,
      message: `the file is empty; a CSV import starts with a header row: ${spec.fields.join(',')}`,
    })
  }
  bar.update(`validated ${count(seen)} rows`, true)
  return { problems, accepted: kept }
}

function reportUnknownFields(
  values: RecordValues,
  accepted: ReadonlySet<string>,
  message: string,
  report: (field: string, message: string) => void,
): void {
  for (const field of Object.keys(values)) if (!accepted.has(field)) report(field, message)
}

/**
 * Problems that span rows: a key seen before, a student not stored (when it must be), a sandbox
 * student. A sandbox student's row holds a synthetic name that test keys read without any
 * agreement, so an import that wrote a real child's name there would disclose it.
 */
async function crossRowProblems<Row>(
  spec: ImportSpec<Row, unknown>,
  staging: ImportStaging,
  file: string,
): Promise<InputProblem[]> {
  const problems: InputProblem[] = []
  for (const duplicate of await staging.duplicates()) {
    problems.push({
      file,
      line: duplicate.line,
      ...spec.duplicate(JSON.parse(duplicate.row) as Row, duplicate.firstLine),
    })
  }
  if (spec.student !== undefined) {
    const { field, mustExist } = spec.student
    for (const found of await staging.studentProblems(mustExist)) {
      const message =
        found.kind === 'missing'
          ? `no student ${found.student}; import the student first`
          : `student ${found.student} is a sandbox (synthetic) student; imports never change sandbox students`
      problems.push({ file, line: found.line, field, message })
    }
  }
  return problems
}

/**
 * Writes the staged rows in committed batches, pausing after each on SQLite (pauseAfterBatch),
 * and the audit row with the last batch.
 */
async function writeBatches<Row>(
  spec: ImportSpec<Row, unknown>,
  db: Kysely<Database>,
  engine: Engine,
  staging: ImportStaging,
  total: number,
  request: ImportRequest,
  context: unknown,
  bar: ProgressLine,
): Promise<void> {
  const { file, format, now } = request
  const change = (rows: number): ImportChange => ({ file, format, rows, total, complete: rows === total })
  let done = 0
  let recorded = false
  const sqliteBatch = engine === 'sqlite' ? new WriteBatchSize() : undefined
  for await (const texts of staging.accepted(() => sqliteBatch?.rows ?? POSTGRES_BATCH)) {
    const rows = texts.map((text) => JSON.parse(text) as Row)
    const started = performance.now()
    try {
      await db.transaction().execute(async (trx) => {
        await spec.write(trx, rows, now, () => {}, context)
        if (done + rows.length === total) await request.record(trx, change(total))
      })
      recorded = done + rows.length === total
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error)
      // What was written stays written, so it is recorded; if even that fails, the message below says it all.
      if (done > 0)
        await db
          .transaction()
          .execute((trx) => request.record(trx, change(done)))
          .catch(() => {})
      throw new CliError(
        `${file}: writing stopped after ${count(done)} of ${count(total)} rows (${reason}); ` +
          'the rows written are kept, and running the same import again completes it',
      )
    }
    done += rows.length
    bar.update(`written ${count(done)}/${count(total)}`, done === total)
    if (sqliteBatch !== undefined) {
      const held = performance.now() - started
      sqliteBatch.record(rows.length, held)
      await pauseAfterBatch(held)
    }
  }
  // A file without rows has no batch to carry its row.
  if (!recorded) await db.transaction().execute((trx) => request.record(trx, change(done)))
}

/** The accepted rows, parsed, a batch at a time in key order. */
async function* parsed<Row>(staging: ImportStaging): AsyncGenerator<Row[]> {
  for await (const texts of staging.accepted(() => POSTGRES_BATCH)) yield texts.map((text) => JSON.parse(text) as Row)
}

/**
 * Runs one import; throws a CliError carrying every problem when anything is wrong, having
 * written nothing.
 *
 * @example
 * await runImport(studentImport, storage, { file: 'students.csv', format: 'csv', now: Date.now(), record })
 */
export async function runImport<Row, Context>(
  spec: ImportSpec<Row, Context>,
  storage: { db: Kysely<Database>; engine: Engine },
  request: ImportRequest,
): Promise<ImportSummary> {
  const { file, format } = request
  if (!fs.existsSync(file) || !fs.statSync(file).isFile()) throw new CliError(`no file "${file}"`)
  const bar = new ProgressLine()
  try {
    // One pinned connection: the staging table exists only on the connection that made it.
    return await storage.db.connection().execute(async (db) => {
      const staging = await ImportStaging.create(db)
      try {
        const context = await spec.prepare(db, request.options ?? {}, { file, actor: request.actor ?? null })
        const { problems, accepted } = await stage(spec, staging, file, format, context, bar)
        bar.update('checking rows against each other and the database', true)
        // A loop, not push(...): spreading a million problems would overflow the call stack.
        for (const problem of await crossRowProblems(spec as ImportSpec<Row, unknown>, staging, file))
          problems.push(problem)
        if (problems.length > 0) {
          // Stable sort: problems of one line stay in field order.
          problems.sort((a, b) => a.line - b.line)
          throw new CliError(`${file}: ${plural(problems.length, 'problem')}; nothing was imported`, problems)
        }
        if (spec.ending !== undefined && request.confirm !== undefined) {
          const rows = parsed<Row>(staging)
          const change = await spec.ending.preview(db, rows, { file, actor: request.actor ?? null })
          bar.clear()
          if (!(await request.confirm(change))) return { file, format, rows: 0 }
        }
        await writeBatches(
          spec as ImportSpec<Row, unknown>,
          db,
          storage.engine,
          staging,
          accepted,
          request,
          context,
          bar,
        )
        return { file, format, rows: accepted }
      } finally {
        await staging.drop()
      }
    })
  } finally {
    bar.clear()
  }
}
