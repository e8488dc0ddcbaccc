/**
 * The CSV and JSON Lines imports as a format of the one run (import-run.ts), so students, links,
 * progress and school members behave alike:
 *
 * 1. read the file as a stream and check every row, collecting every problem with its line;
 *    checked rows go to a staging table (storage/import-staging-repository.ts), not into memory;
 * 2. check the staged rows against each other (duplicates) and against stored data (are their
 *    students stored? is any a sandbox student?);
 * 3. if anything at all is wrong, report every problem and write nothing; otherwise write the
 *    rows in batches in key order, each committed on its own (on SQLite sized to hold the write
 *    lock about 20 ms, import-batches.ts).
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
import { UUID } from '../domain/uuid.js'
import type { Engine } from '../storage/connection.js'
import { ImportStaging } from '../storage/import-staging-repository.js'
import type { Database } from '../storage/tables.js'
import { ImportBatches } from './import-batches.js'
import { type ImportSpec, runImport } from './import-run.js'
import type { ImportProblem } from './problems.js'
import { fieldValue, readRecords, type RecordFormat, type RecordValues } from './records.js'
import type {
  ImportChange,
  ImportRequest,
  ImportSummary,
  ProgressReport,
  RecordImportSpec,
  RowInput,
} from './record-spec.js'
import { WriteBatchSize } from './write-batch-size.js'

/** Stops a run: a file that is not there, or writing that failed part-way (its message says so). */
export class ImportStopped extends Error {
  override name = 'ImportStopped'
}

const count = (value: number): string => value.toLocaleString('en-US')

const REPORT_EVERY = 1000

/**
 * Rows per write transaction on PostgreSQL, where a transaction locks only the rows it writes;
 * on SQLite the size follows the time the lock is held (WriteBatchSize).
 */
const POSTGRES_BATCH = 2000

/** Reads, checks and stages every row; returns the problems found row by row. */
async function stage<Row, Context>(
  spec: RecordImportSpec<Row, Context, unknown>,
  staging: ImportStaging,
  file: string,
  format: RecordFormat,
  context: Context,
  bar: ProgressReport,
): Promise<{ problems: ImportProblem[]; accepted: number }> {
  const accepted = new Set(spec.fields)
  const required = spec.fields.filter((field) => !spec.optional?.includes(field))
  const problems: ImportProblem[] = []
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
  spec: RecordImportSpec<Row, unknown, unknown>,
  staging: ImportStaging,
  file: string,
): Promise<ImportProblem[]> {
  const problems: ImportProblem[] = []
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
 * Writes the staged rows in committed batches (import-batches.ts: on SQLite sized by lock time
 * and paused after), and the audit row with the last batch.
 */
async function writeBatches<Row>(
  spec: RecordImportSpec<Row, unknown, unknown>,
  session: Session,
  total: number,
  request: ImportRequest,
  bar: ProgressReport,
): Promise<void> {
  const { db, staging, context } = session
  const { file, format, now } = request
  const change = (rows: number): ImportChange => ({ file, format, rows, total, complete: rows === total })
  let done = 0
  let recorded = false
  const batches = new ImportBatches(db, true, session.engine === 'sqlite' ? new WriteBatchSize() : undefined)
  for await (const texts of staging.accepted(() => batches.size?.rows ?? POSTGRES_BATCH)) {
    const rows = texts.map((text) => JSON.parse(text) as Row)
    try {
      await batches.unit(async (trx) => {
        await spec.write(trx, rows, now, () => {}, context)
        if (done + rows.length === total) await request.record(trx, change(total))
      }, rows.length)
      recorded = done + rows.length === total
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error)
      // What was written stays written, so it is recorded; if even that fails, the message below says it all.
      if (done > 0)
        await db
          .transaction()
          .execute((trx) => request.record(trx, change(done)))
          .catch(() => {})
      throw new ImportStopped(
        `${file}: writing stopped after ${count(done)} of ${count(total)} rows (${reason}); ` +
          'the rows written are kept, and running the same import again completes it',
      )
    }
    done += rows.length
    bar.update(`written ${count(done)}/${count(total)}`, done === total)
  }
  // A file without rows has no batch to carry its row.
  if (!recorded) await db.transaction().execute((trx) => request.record(trx, change(done)))
}

/** The accepted rows, parsed, a batch at a time in key order. */
async function* parsed<Row>(staging: ImportStaging): AsyncGenerator<Row[]> {
  for await (const texts of staging.accepted(() => POSTGRES_BATCH)) yield texts.map((text) => JSON.parse(text) as Row)
}

/** The pinned connection a run checks and writes on, with its staging table and the spec's context. */
interface Session {
  db: Kysely<Database>
  engine: Engine
  staging: ImportStaging
  context: unknown
}

/** What checking found: every problem, in line order, and how many rows were accepted. */
interface Checked {
  problems: ImportProblem[]
  accepted: number
}

/** The run's format for one spec and request. */
function recordFormat<Row, Context, Preview>(
  spec: RecordImportSpec<Row, Context, Preview>,
  storage: { db: Kysely<Database>; engine: Engine },
  request: ImportRequest<Preview>,
  bar: ProgressReport,
): ImportSpec<Session, string, Checked, Preview | undefined, void> {
  const { file, format } = request
  const run = { file, actor: request.actor ?? null }
  const generic = spec as unknown as RecordImportSpec<Row, unknown, unknown>
  return {
    async read() {
      if (!fs.existsSync(file) || !fs.statSync(file).isFile()) throw new ImportStopped(`no file "${file}"`)
      return { ok: true, value: file }
    },
    // One pinned connection: the staging table exists only on the connection that made it.
    open: (work) =>
      storage.db.connection().execute(async (db) => {
        const staging = await ImportStaging.create(db)
        try {
          const context = await spec.prepare(db, request.options ?? {}, run)
          return await work({ db, engine: storage.engine, staging, context })
        } finally {
          await staging.drop()
        }
      }),
    async check({ staging, context }) {
      const { problems, accepted } = await stage(spec, staging, file, format, context as Context, bar)
      bar.update('checking rows against each other and the database', true)
      // A loop, not push(...): spreading a million problems would overflow the call stack.
      for (const problem of await crossRowProblems(generic, staging, file)) problems.push(problem)
      // Stable sort: problems of one line stay in field order.
      problems.sort((a, b) => a.line! - b.line!)
      return { problems, accepted }
    },
    problems: (checked) => ({ problems: checked.problems, more: 0 }),
    async preview({ db, staging }) {
      const change = await spec.ending?.preview(db, parsed<Row>(staging), run)
      bar.clear()
      return change
    },
    write: (session, _file, checked) => writeBatches(generic, session, checked!.accepted, request, bar),
  }
}

/**
 * Runs one import. Returns every problem when anything is wrong, having written nothing; throws
 * ImportStopped when the file is not there or writing stopped part-way.
 *
 * @example
 * await runRecordImport(studentImport, storage, { file: 'students.csv', format: 'csv', now: Date.now(), record })
 */
export async function runRecordImport<Row, Context, Preview>(
  spec: RecordImportSpec<Row, Context, Preview>,
  storage: { db: Kysely<Database>; engine: Engine },
  request: ImportRequest<Preview>,
): Promise<{ ok: true; summary: ImportSummary } | { ok: false; problems: readonly ImportProblem[] }> {
  const { file, format } = request
  const quiet: ProgressReport = { update() {}, clear() {} }
  const bar = request.progress ?? quiet
  const confirm = request.confirm
  try {
    const result = await runImport(
      recordFormat(spec, storage, request, bar),
      spec.ending !== undefined && confirm !== undefined ? (change) => confirm(change as Preview) : undefined,
    )
    if (result.kind === 'refused') return { ok: false, problems: result.problems }
    const rows = result.kind === 'written' ? result.checked.accepted : 0
    return { ok: true, summary: { file, format, rows } }
  } finally {
    bar.clear()
  }
}
