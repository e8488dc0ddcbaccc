/**
 * One CSV file of a roster export, read as a stream of bytes: decoded as UTF-8 (a byte order
 * mark is allowed, UTF-16 and invalid UTF-8 are refused), parsed by the project's RFC 4180
 * reader, and handed over row by row with the columns found by name, so that the order of the
 * header does not matter and columns the reader does not know are never looked at.
 *
 * A file that cannot be read as a whole (wrong encoding, a row that never ends, too many rows,
 * a header without a required column) is reported once and reading stops; a bad row is
 * reported with its line and reading goes on, so that one pass finds every bad row.
 */
import { CsvParser, type CsvRecord } from '../imports/csv.js'
import type { ProblemList } from '../imports/problems.js'
import { ZipError } from '../imports/zip-reader.js'

export interface TableLimits {
  /** Most data rows in one file. */
  maxRows: number
  /** Most characters of one row; a longer one is taken for a quote left open. */
  maxRowChars: number
}

export interface TableRow {
  line: number
  fields: readonly string[]
}

/** A column's index in the file's rows, or -1 for an optional column the file lacks. */
export type Columns<C extends string> = Readonly<Record<C, number>>

export function cell(row: TableRow, index: number): string {
  return index < 0 ? '' : (row.fields[index] ?? '')
}

export interface TableSpec<C extends string> {
  required: readonly C[]
  optional: readonly C[]
}

/**
 * Reads the file and calls `onRow` for each well-formed data row; `onRow` returns false to stop
 * reading. Returns whether the file was read to its end.
 */
export async function readTable<C extends string>(
  file: string,
  bytes: AsyncIterable<Uint8Array>,
  spec: TableSpec<C>,
  limits: TableLimits,
  problems: ProblemList,
  onRow: (row: TableRow, columns: Columns<C>) => boolean,
): Promise<boolean> {
  const parser = new CsvParser()
  const decoder = new TextDecoder('utf-8', { fatal: true })
  let columns: Columns<C> | undefined
  let width = 0
  let rows = 0
  let started = false
  let charsSinceRecord = 0

  /** Handles parsed records; false once reading must stop. */
  const take = (records: readonly CsvRecord[]): boolean => {
    for (const record of records) {
      if (columns === undefined) {
        const header = readHeader(file, record, spec, problems)
        if (header === null) return false
        columns = header
        width = record.fields.length
        continue
      }
      if (++rows > limits.maxRows) {
        problems.add({
          file,
          line: record.line,
          message: `holds more than ${limits.maxRows.toLocaleString('en-US')} rows, the most a roster file may hold`,
        })
        return false
      }
      if (record.error !== undefined) problems.add({ file, line: record.line, message: record.error })
      else if (record.fields.length !== width)
        problems.add({
          file,
          line: record.line,
          message: `has ${record.fields.length} fields; the header has ${width}`,
        })
      else if (!onRow(record, columns)) return false
    }
    return true
  }

  try {
    for await (const chunk of bytes) {
      if (!started && chunk.length >= 2) {
        started = true
        if ((chunk[0] === 0xff && chunk[1] === 0xfe) || (chunk[0] === 0xfe && chunk[1] === 0xff)) {
          problems.add({ file, message: 'is UTF-16 text; OneRoster files are UTF-8: export or save it as UTF-8' })
          return false
        }
      }
      let text: string
      try {
        text = decoder.decode(chunk, { stream: true })
      } catch {
        // The rows before the bad bytes are read, so that the problem names the row they are in.
        take(parser.push(validUtf8Prefix(chunk)))
        problems.add(notUtf8(file, parser.recordLine))
        return false
      }
      if (text.includes('\0')) {
        problems.add({
          file,
          line: parser.recordLine,
          message: 'holds NUL characters, as UTF-16 text without a byte order mark does: export or save it as UTF-8',
        })
        return false
      }
      const records = parser.push(text)
      charsSinceRecord = records.length > 0 ? 0 : charsSinceRecord + text.length
      if (charsSinceRecord > limits.maxRowChars) {
        problems.add({
          file,
          line: parser.recordLine,
          message:
            `a row runs past ${limits.maxRowChars.toLocaleString('en-US')} characters without ending: ` +
            'is a quote left open?',
        })
        return false
      }
      if (!take(records)) return false
    }
  } catch (error) {
    if (!(error instanceof ZipError)) throw error
    problems.add({ file, message: error.message })
    return false
  }
  try {
    if (!take(parser.push(decoder.decode()))) return false
  } catch {
    problems.add(notUtf8(file, parser.recordLine))
    return false
  }
  if (!take(parser.end())) return false
  if (columns === undefined) {
    problems.add({ file, message: 'is empty: a OneRoster file starts with a header row' })
    return false
  }
  return true
}

/** The longest start of the chunk that is UTF-8, decoded; a prefix of valid UTF-8 is valid too. */
function validUtf8Prefix(chunk: Uint8Array): string {
  const decode = (length: number) =>
    new TextDecoder('utf-8', { fatal: true }).decode(chunk.subarray(0, length), { stream: true })
  let valid = 0
  let invalid = chunk.length
  while (invalid - valid > 1) {
    const middle = (valid + invalid) >>> 1
    try {
      decode(middle)
      valid = middle
    } catch {
      invalid = middle
    }
  }
  return decode(valid)
}

function notUtf8(file: string, line: number) {
  return { file, line, message: 'is not valid UTF-8 text from this line on: export or save it as UTF-8' }
}

function readHeader<C extends string>(
  file: string,
  record: CsvRecord,
  spec: TableSpec<C>,
  problems: ProblemList,
): Columns<C> | null {
  const { line } = record
  if (record.error !== undefined) problems.add({ file, line, message: `header: ${record.error}` })
  const names = record.fields.map((name) => name.trim())
  const columns = {} as Record<C, number>
  let complete = true
  for (const column of [...spec.required, ...spec.optional]) {
    const index = names.indexOf(column)
    columns[column] = index
    if (index >= 0 && names.indexOf(column, index + 1) >= 0) {
      problems.add({ file, line, message: `the header names the column ${column} twice` })
      complete = false
    } else if (index < 0 && spec.required.includes(column)) {
      problems.add({ file, line, message: `the header lacks the column ${column}` })
      complete = false
    }
  }
  return complete ? columns : null
}
