/**
 * Reading a file that lists one thing a row (CSV under a header, or JSON Lines), as `students
 * erase --file` and `links add --file` take: the file's own problems (a line that is no record, a
 * CSV file without even a header) are found here, what a row must hold by the caller.
 */
import { type RecordFormat, readRecords, type SourceItem } from '../imports/records.js'
import type { InputProblem } from './output.js'

/** Hands each header and record to `visit`, in file order; returns every problem, the file's and `visit`'s. */
export async function readListFile(
  file: string,
  format: RecordFormat,
  emptyMessage: string,
  visit: (item: Exclude<SourceItem, { kind: 'problem' }>, problems: InputProblem[]) => void,
): Promise<InputProblem[]> {
  const problems: InputProblem[] = []
  let header = false
  for await (const batch of readRecords(file, format)) {
    for (const item of batch) {
      if (item.kind === 'problem') problems.push({ file, line: item.line, message: item.message })
      else {
        if (item.kind === 'header') header = true
        visit(item, problems)
      }
    }
  }
  if (format === 'csv' && !header && problems.length === 0) problems.push({ file, line: 1, message: emptyMessage })
  return problems
}
