/**
 * Strict ISO 8601 parsing. `Date.parse` accepts far more than ISO (and rolls 2026-02-30 over
 * into March), which would let a typo in an agreement date or a progress row through, so dates
 * are matched field by field and checked against the calendar.
 */

/**
 * Accepted years: nothing recorded here predates 1970, and stored timestamps sort as text only
 * while the year has four digits.
 */
const EARLIEST = Date.UTC(1970, 0, 1)
const LATEST = Date.UTC(9999, 11, 31, 23, 59, 59, 999)

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})$/

function utc(year: number, month: number, day: number, hour = 0, minute = 0, second = 0, ms = 0): number | null {
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null
  const date = new Date(0)
  // setUTCFullYear, unlike Date.UTC, does not map years 0-99 to 1900-1999.
  date.setUTCFullYear(year, month - 1, day)
  date.setUTCHours(hour, minute, second, ms)
  return date.getUTCDate() === day ? date.getTime() : null
}

/** A full timestamp with a time zone (`2026-01-31T09:30:00Z`, `...+01:00`), as epoch ms; null if not one. */
export function parseTimestamp(text: string): number | null {
  const m = DATE_TIME.exec(text)
  if (m === null) return null
  const ms = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'))
  const local = utc(Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6] ?? 0), ms)
  if (local === null) return null
  const zone = m[8]!
  if (zone === 'Z') return inRange(local)
  const offsetHours = Number(zone.slice(1, 3))
  const offsetMinutes = Number(zone.slice(4, 6))
  if (offsetHours > 23 || offsetMinutes > 59) return null
  const offset = (offsetHours * 60 + offsetMinutes) * 60_000
  return inRange(zone.startsWith('+') ? local - offset : local + offset)
}

function inRange(ms: number | null): number | null {
  return ms !== null && ms >= EARLIEST && ms <= LATEST ? ms : null
}

/** A date (`2026-01-31`, meaning midnight UTC) or a full timestamp, as epoch ms; null if neither. */
export function parseDateOrTimestamp(text: string): number | null {
  const m = DATE.exec(text.trim())
  if (m !== null) return inRange(utc(Number(m[1]), Number(m[2]), Number(m[3])))
  return parseTimestamp(text.trim())
}
