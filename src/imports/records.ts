/**
 * Reads an import file, CSV or JSON Lines, as a stream of records that know their line
 * number. Neither format is ever read into memory whole: both are parsed chunk by chunk, so a
 * file of millions of rows costs only the rows kept.
 */
import fs from 'node:fs'
import { CsvParser, type CsvRecord } from './csv.js'

export const RECORD_FORMATS = ['csv', 'jsonl'] as const
export type RecordFormat = (typeof RECORD_FORMATS)[number]

/** A record's fields by name: strings from CSV, any JSON value from JSON Lines. Read them with `fieldValue`. */
export type RecordValues = Readonly<Record<string, unknown>>

/**
 * A field's value, or undefined when the record lacks it. Own properties only: a field named
 * "constructor" or "__proto__" must not find Object.prototype's (JSON.parse makes even
 * "__proto__" an own property).
 */
export function fieldValue(values: RecordValues, name: string): unknown {
  return Object.hasOwn(values, name) ? values[name] : undefined
}

export type SourceItem =
  /** CSV only: the header row, which names the fields of every record after it. */
  | { kind: 'header'; line: number; fields: string[] }
  | { kind: 'record'; line: number; values: RecordValues }
  /** A line that could not be read as a record at all. */
  | { kind: 'problem'; line: number; message: string }

/**
 * 256 KiB reads: few enough syscalls to be fast, and few enough records alive at once (a
 * chunk's worth) to keep memory flat; larger chunks raised an import's peak.
 */
const CHUNK_BYTES = 1 << 18

/**
 * The file's items, a chunk's worth at a time. Batches rather than single items: one `await`
 * per row would cost more than checking the row does.
 */
export function readRecords(file: string, format: RecordFormat): AsyncGenerator<SourceItem[]> {
  return format === 'csv' ? readCsv(file) : readJsonLines(file)
}

function chunks(file: string): AsyncIterable<string> {
  return fs.createReadStream(file, { encoding: 'utf8', highWaterMark: CHUNK_BYTES })
}

async function* readCsv(file: string): AsyncGenerator<SourceItem[]> {
  const parser = new CsvParser()
  let header: string[] | undefined
  const items = (records: readonly CsvRecord[]): SourceItem[] => {
    const out: SourceItem[] = []
    for (const record of records) {
      if (record.error !== undefined) {
        out.push({ kind: 'problem', line: record.line, message: record.error })
        // A damaged header is still the best guess at the columns; without it every row would fail.
        if (header !== undefined) continue
      }
      if (header === undefined) {
        header = record.fields.map((field) => field.trim())
        out.push({ kind: 'header', line: record.line, fields: header })
        continue
      }
      if (record.fields.length !== header.length) {
        out.push({
          kind: 'problem',
          line: record.line,
          message: `has ${record.fields.length} fields; the header has ${header.length}`,
        })
        continue
      }
      const values: Record<string, unknown> = Object.create(null)
      for (let index = 0; index < header.length; index++) values[header[index]!] = record.fields[index]
      out.push({ kind: 'record', line: record.line, values })
    }
    return out
  }
  for await (const chunk of chunks(file)) yield items(parser.push(chunk))
  yield items(parser.end())
}

/** Splits text into lines at LF, CRLF or a lone CR (as readline does), across chunk boundaries. */
class LineSplitter {
  #rest = ''
  #afterCr = false

  push(chunk: string): string[] {
    const lines: string[] = []
    let start = 0
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i)
      if (c !== 0x0a && c !== 0x0d) continue
      if (c === 0x0a && this.#afterCr && i === start && this.#rest === '') {
        // The LF of a CRLF whose CR already ended the line.
        start = i + 1
        this.#afterCr = false
        continue
      }
      lines.push(this.#rest + chunk.slice(start, i))
      this.#rest = ''
      this.#afterCr = c === 0x0d
      start = i + 1
    }
    if (start < chunk.length) {
      this.#rest += chunk.slice(start)
      this.#afterCr = false
    }
    return lines
  }

  end(): string[] {
    return this.#rest === '' ? [] : [this.#rest]
  }
}

async function* readJsonLines(file: string): AsyncGenerator<SourceItem[]> {
  const splitter = new LineSplitter()
  let line = 0
  const items = (texts: readonly string[]): SourceItem[] => {
    const out: SourceItem[] = []
    for (const text of texts) {
      line++
      const trimmed = (line === 1 ? text.replace(/^\uFEFF/, '') : text).trim()
      if (trimmed === '') continue
      let value: unknown
      try {
        value = JSON.parse(trimmed)
      } catch (error) {
        out.push({ kind: 'problem', line, message: `not valid JSON: ${(error as Error).message}` })
        continue
      }
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        out.push({ kind: 'problem', line, message: 'each line must be one JSON object, such as {"id": "...", ...}' })
        continue
      }
      out.push({ kind: 'record', line, values: value as RecordValues })
    }
    return out
  }
  for await (const chunk of chunks(file)) yield items(splitter.push(chunk))
  yield items(splitter.end())
}
