/**
 * What a CSV or JSON Lines import (record-import.ts) is: its fields and how a row is checked,
 * which student it names, and how its rows are written (a case's function). The CLI's import
 * commands each choose one.
 */
import type { Kysely } from 'kysely'
import type { Database } from '../storage/tables.js'
import type { RecordFormat } from './records.js'

/** One row as a spec's `parse` sees it. */
export interface RowInput {
  readonly line: number
  readonly format: RecordFormat
  /** The field's value, or undefined when the row lacks it. */
  value(field: string): unknown
  report(field: string, message: string): void
}

export interface RecordImportSpec<Row, Context, Preview = never> {
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
   * would end, read before anything is written, for the command to show and ask about.
   */
  ending?: {
    /** What --yes does, for its help. */
    yes: string
    preview(db: Kysely<Database>, rows: AsyncIterable<Row[]>, run: ImportRun): Promise<Preview>
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

export interface ImportRequest<Preview = never> {
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
  confirm?(change: Preview): Promise<boolean>
  /** Where the run says how far it got (a terminal's progress line). */
  progress?: ProgressReport
}

/** A line that says how far a run got, replaced as it goes. */
export interface ProgressReport {
  /** With `force`, shown at once rather than at the line's next refresh. */
  update(text: string, force?: boolean): void
  clear(): void
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
