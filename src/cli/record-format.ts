/**
 * The format of an import file named on the command line: taken from its extension unless
 * `--format` names it.
 */
import path from 'node:path'
import type { RecordFormat } from '../imports/records.js'
import { UsageError } from './output.js'

const EXTENSIONS: Record<string, RecordFormat> = { '.csv': 'csv', '.jsonl': 'jsonl', '.ndjson': 'jsonl' }

export function formatOf(file: string, explicit: RecordFormat | undefined): RecordFormat {
  if (explicit !== undefined) return explicit
  const format = EXTENSIONS[path.extname(file).toLowerCase()]
  if (format === undefined)
    throw new UsageError(
      `cannot tell the format of "${file}" from its name; name it .csv, .jsonl or .ndjson, or pass --format csv|jsonl`,
    )
  return format
}
