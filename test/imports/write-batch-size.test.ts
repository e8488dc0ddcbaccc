import { describe, expect, it } from 'vitest'
import { MAX_ROWS, MIN_ROWS, TARGET_MS, WriteBatchSize } from '../../src/imports/write-batch-size.js'

describe('the import write batch on SQLite', () => {
  it('shrinks at once to the rows that hold the lock about the target time on a slow machine', () => {
    const size = new WriteBatchSize()
    const first = size.rows
    // The first batch held the lock ten times the target: the next is a tenth of it.
    size.record(first, TARGET_MS * 10)
    expect(size.rows).toBe(Math.round(first / 10))
  })

  it('grows at most twofold per quick batch, up to the maximum', () => {
    const size = new WriteBatchSize()
    const seen = [size.rows]
    for (let i = 0; i < 10; i++) {
      size.record(size.rows, 1)
      seen.push(size.rows)
    }
    for (let i = 1; i < seen.length; i++) expect(seen[i]!).toBeLessThanOrEqual(Math.min(MAX_ROWS, seen[i - 1]! * 2))
    expect(size.rows).toBe(MAX_ROWS)
  })

  it('never goes below the minimum, nor divides by a zero time', () => {
    const size = new WriteBatchSize()
    size.record(size.rows, 100_000)
    expect(size.rows).toBe(MIN_ROWS)
    size.record(size.rows, 0)
    expect(size.rows).toBe(MIN_ROWS * 2)
  })
})
