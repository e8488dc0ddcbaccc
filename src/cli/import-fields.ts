/**
 * Field checks shared by the import commands. Each reads one field of a row, reports what is
 * wrong with it in words an operator can act on, and returns the value in its stored form
 * (lower-case ids, UTC timestamps) or null. CSV gives every value as text; JSON Lines gives
 * JSON types, and a number written as a string there is an error, not a guess.
 */
import { parseTimestamp } from './dates.js'
import { UUID } from '../domain/uuid.js'
import type { RowInput } from '../imports/record-spec.js'

/** PostgreSQL `integer` is 32-bit; a larger count would fail the whole import at write time. */
const MAX_COUNT = 2_147_483_647

function isMissing(value: unknown): boolean {
  return value === undefined || value === null || value === ''
}

/** A required string, as written (not trimmed). */
export function text(row: RowInput, field: string): string | null {
  const value = row.value(field)
  if (isMissing(value)) {
    row.report(field, 'is required')
    return null
  }
  if (typeof value !== 'string') {
    row.report(field, `must be a string (got ${JSON.stringify(value)})`)
    return null
  }
  return value
}

export function uuid(row: RowInput, field: string): string | null {
  const value = text(row, field)
  if (value === null) return null
  if (!UUID.test(value.trim())) {
    row.report(field, `must be a UUID such as 11111111-1111-4111-8111-111111111111 (got "${value}")`)
    return null
  }
  return value.trim().toLowerCase()
}

export function oneOf<T extends string>(row: RowInput, field: string, allowed: readonly T[]): T | null {
  const value = text(row, field)
  if (value === null) return null
  const match = allowed.find((candidate) => candidate === value.trim())
  if (match === undefined) row.report(field, `must be one of ${allowed.join(', ')} (got "${value}")`)
  return match ?? null
}

/** A whole number from 0 to 2,147,483,647. */
export function count(row: RowInput, field: string): number | null {
  const value = row.value(field)
  if (isMissing(value)) {
    row.report(field, 'is required')
    return null
  }
  const number =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && row.format === 'csv' && /^\s*\d+\s*$/.test(value)
        ? Number(value)
        : NaN
  if (!Number.isInteger(number) || number < 0 || number > MAX_COUNT) {
    row.report(field, `must be a whole number from 0 to ${MAX_COUNT} (got ${JSON.stringify(value)})`)
    return null
  }
  return number
}

/** A timestamp with a time zone, returned as ISO 8601 UTC with milliseconds (the stored form). */
export function timestamp(row: RowInput, field: string): string | null {
  const value = text(row, field)
  if (value === null) return null
  const ms = parseTimestamp(value.trim())
  if (ms === null) {
    row.report(field, `must be an ISO 8601 timestamp with a time zone, such as 2026-01-31T09:30:00Z (got "${value}")`)
    return null
  }
  return new Date(ms).toISOString()
}

/** Like `timestamp`, but an absent, null or empty value is no timestamp (undefined). */
export function optionalTimestamp(row: RowInput, field: string): string | null | undefined {
  return isMissing(row.value(field)) ? undefined : timestamp(row, field)
}
