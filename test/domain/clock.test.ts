/** isoAt keeps its last answer: every call must still answer for its own time. */
import { describe, expect, it } from 'vitest'
import { isoAt } from '../../src/clock.js'

describe('isoAt', () => {
  it('answers each time for its own millisecond, repeated or not', () => {
    const times = [0, 1, 1, 1_795_500_000_123, 1_795_500_000_123, 1_795_500_000_124, 0, -1, 8.64e15]
    for (const ms of times) expect(isoAt(ms)).toBe(new Date(ms).toISOString())
  })

  it('refuses a time no date can hold, also right after a good one', () => {
    isoAt(1_795_500_000_123)
    expect(() => isoAt(Number.NaN)).toThrow(RangeError)
    expect(() => isoAt(8.64e15 + 1)).toThrow(RangeError)
    expect(isoAt(1_795_500_000_123)).toBe('2026-11-24T06:00:00.123Z')
  })
})
