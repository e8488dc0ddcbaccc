/**
 * How commands answer. With --json, stdout carries exactly one JSON document, success or
 * failure, so a script can always parse it; otherwise stdout carries text for people and
 * errors go to stderr. Exit codes: 0 done, 1 failed (bad data, conflict, not found), 2 the
 * command line itself was wrong, 3 a change that ends access was not confirmed (confirm.ts).
 */
import { formatImportProblem, type ImportProblem } from '../imports/problems.js'

/** A problem with an input, located so that an operator can open the file at that line. */
export interface InputProblem extends ImportProblem {
  line: number
}

export class CliError extends Error {
  override name = 'CliError'
  constructor(
    message: string,
    readonly problems: readonly ImportProblem[] = [],
    readonly exitCode = 1,
    /** Fields for the --json error beside the message, for a script to act on. */
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message)
  }
}

/** The command line is wrong (a missing or malformed option); exits 2 like commander's own errors. */
export class UsageError extends CliError {
  override name = 'UsageError'
  constructor(message: string) {
    super(message, [], 2)
  }
}

/** What a command produced: fields for the JSON document, and the text shown without --json. */
export interface CommandResult {
  data: Record<string, unknown>
  text: string | readonly string[]
}

export function writeJson(document: unknown): void {
  process.stdout.write(`${JSON.stringify(document)}\n`)
}

export function writeText(text: string | readonly string[]): void {
  const lines = typeof text === 'string' ? [text] : text
  if (lines.length > 0) process.stdout.write(`${lines.join('\n')}\n`)
}

export function reportFailure(
  json: boolean,
  message: string,
  problems: readonly ImportProblem[] = [],
  details: Readonly<Record<string, unknown>> = {},
): void {
  if (json) {
    writeJson({ ok: false, error: { message, problems, ...details } })
    return
  }
  // Problems are written in chunks: an import with a million bad rows must not build one string.
  let buffer = ''
  for (const problem of problems) {
    buffer += `${formatImportProblem(problem)}\n`
    if (buffer.length > 65_536) {
      process.stderr.write(buffer)
      buffer = ''
    }
  }
  process.stderr.write(`${buffer}error: ${message}\n`)
}

/** Left-aligned columns separated by two spaces; empty values shown as "-". */
export function table(headers: readonly string[], rows: readonly (readonly (string | null | undefined)[])[]): string[] {
  const cells = rows.map((row) => headers.map((_, index) => row[index] || '-'))
  const widths = headers.map((header, index) =>
    cells.reduce((width, row) => Math.max(width, row[index]!.length), header.length),
  )
  const format = (row: readonly string[]) =>
    row
      .map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index]!)))
      .join('  ')
      .trimEnd()
  return [format(headers), ...cells.map(format)]
}

/** `rows` as a table, or the single line `empty` when there are none. */
export function tableOf<Row>(
  empty: string,
  headers: readonly string[],
  rows: readonly Row[],
  cells: (row: Row) => readonly (string | null | undefined)[],
): string[] {
  return rows.length === 0 ? [empty] : table(headers, rows.map(cells))
}

export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count.toLocaleString('en-US')} ${count === 1 ? one : many}`
}

/** The error for an output file that could not be created; one that exists is never written over. */
export function outputFileError(file: string, error: unknown, noun: string): CliError {
  const code = (error as NodeJS.ErrnoException).code
  return new CliError(
    code === 'EEXIST'
      ? `${file} already exists: choose a new file (a ${noun} never replaces one)`
      : `cannot write ${file}: ${(error as Error).message}`,
  )
}
