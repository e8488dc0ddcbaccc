import { describe, expect, it } from 'vitest'
import { parseDateOrTimestamp, parseTimestamp } from '../../src/cli/dates.js'

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())

describe('timestamps', () => {
  it('accept ISO 8601 with a zone, to any precision up to nanoseconds', () => {
    expect(iso(parseTimestamp('2026-01-31T09:30:00Z'))).toBe('2026-01-31T09:30:00.000Z')
    expect(iso(parseTimestamp('2026-01-31T09:30Z'))).toBe('2026-01-31T09:30:00.000Z')
    expect(iso(parseTimestamp('2026-01-31T09:30:00.123456789Z'))).toBe('2026-01-31T09:30:00.123Z')
    expect(iso(parseTimestamp('2026-01-31T00:30:00+01:00'))).toBe('2026-01-30T23:30:00.000Z')
    expect(iso(parseTimestamp('2026-01-31T23:30:00-05:30'))).toBe('2026-02-01T05:00:00.000Z')
    expect(iso(parseTimestamp('2028-02-29T12:00:00Z'))).toBe('2028-02-29T12:00:00.000Z')
  })

  it('refuse what Date.parse would guess at', () => {
    for (const text of [
      '2026-02-30T00:00:00Z',
      '2027-02-29T00:00:00Z',
      '2026-01-31T09:30:00',
      '2026-01-31 09:30:00Z',
      '2026-1-31T09:30:00Z',
      '2026-01-31T24:00:00Z',
      '2026-01-31T09:60:00Z',
      'Jan 31 2026',
      '1969-12-31T23:59:59Z',
      '2026-01-31T09:30:00+24:00',
    ]) {
      expect(parseTimestamp(text), text).toBeNull()
    }
  })
})

describe('dates for options', () => {
  it('read a bare date as midnight UTC, and also take a full timestamp', () => {
    expect(iso(parseDateOrTimestamp('2026-01-31'))).toBe('2026-01-31T00:00:00.000Z')
    expect(iso(parseDateOrTimestamp('2026-01-31T10:00:00+02:00'))).toBe('2026-01-31T08:00:00.000Z')
    expect(parseDateOrTimestamp('2026-13-01')).toBeNull()
    expect(parseDateOrTimestamp('31/01/2026')).toBeNull()
  })
})
