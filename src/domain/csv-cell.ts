/**
 * A cell of a CSV file the service writes (RFC 4180): always quoted, quotes doubled, and a
 * value that a spreadsheet would run as a formula (CSV injection: it starts with `=`, `+`, `-`,
 * `@`, a tab or a carriage return) led by an apostrophe, so it is shown as text. Organisation
 * and key names come from partners, so any cell may hold one.
 */
export function csvCell(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value
  return `"${safe.replace(/"/g, '""')}"`
}

/** One record, CRLF-terminated. */
export function csvRecord(values: readonly (string | number | null)[]): string {
  return `${values.map((value) => csvCell(value === null ? '' : String(value))).join(',')}\r\n`
}
