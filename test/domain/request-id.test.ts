/** Request ids are UUIDv7 whose first 48 bits are the millisecond given, and never repeat. */
import { describe, expect, it } from 'vitest'
import { requestIdAt, requestIdTime } from '../../src/domain/request-id.js'

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe('request ids', () => {
  it('are UUIDv7 carrying the millisecond they were made for, each one new', () => {
    const seen = new Set<string>()
    for (const ms of [0, 1, 1_764_000_000_000, 2 ** 48 - 1]) {
      for (let i = 0; i < 2000; i++) {
        const id = requestIdAt(ms)
        expect(id).toMatch(V7)
        expect(requestIdTime(id)).toBe(ms)
        seen.add(id)
      }
    }
    expect(seen.size).toBe(8000)
  })

  it('name no time when they are not one of ours', () => {
    expect(requestIdTime(crypto.randomUUID())).toBeUndefined()
    expect(requestIdTime('not an id')).toBeUndefined()
    expect(requestIdTime(requestIdAt(5).toUpperCase())).toBe(5)
  })
})
