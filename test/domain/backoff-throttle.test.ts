/** The sign-in throttle: synchronous reservation, doubling delays, settling, forgetting. */
import { describe, expect, it } from 'vitest'
import { ManualClock } from '../../src/clock.js'
import { BackoffThrottle } from '../../src/domain/backoff-throttle.js'

const MINUTE = 60_000
const policy = { freeAttempts: 3, baseDelayMs: MINUTE, maxDelayMs: 4 * MINUTE, forgetAfterMs: 60 * MINUTE }

describe('BackoffThrottle', () => {
  it('reserves synchronously: concurrent attempts beyond the free ones are refused before any settles', () => {
    const throttle = new BackoffThrottle({ policy, clock: new ManualClock() })
    const results = Array.from({ length: 10 }, () => throttle.reserve(['k']))
    expect(results.filter((r) => r.allowed)).toHaveLength(3)
    for (const r of results) if (!r.allowed) expect(r.retryAfterMs).toBeGreaterThan(0)
  })

  it('doubles the delay after each failure beyond the free ones, up to the maximum', () => {
    const clock = new ManualClock()
    const throttle = new BackoffThrottle({ policy, clock })
    const waits: number[] = []
    for (let i = 0; i < 3; i++) {
      const r = throttle.reserve(['k'])
      if (r.allowed) r.attempt.fail()
    }
    for (let i = 0; i < 4; i++) {
      const refused = throttle.reserve(['k'])
      if (refused.allowed) throw new Error('expected a wait')
      waits.push(refused.retryAfterMs)
      clock.advance(refused.retryAfterMs)
      const r = throttle.reserve(['k'])
      if (!r.allowed) throw new Error('expected an attempt after the wait')
      r.attempt.fail()
    }
    expect(waits).toEqual([MINUTE, 2 * MINUTE, 4 * MINUTE, 4 * MINUTE])
  })

  it('does not count cancelled or successful attempts, and a success can clear a key', () => {
    const throttle = new BackoffThrottle({ policy, clock: new ManualClock() })
    for (let i = 0; i < 10; i++) {
      const r = throttle.reserve(['k'])
      if (!r.allowed) throw new Error('refused')
      r.attempt.cancel()
      r.attempt.fail() // settled already: ignored
    }
    for (let i = 0; i < 2; i++) {
      const r = throttle.reserve(['k'])
      if (r.allowed) r.attempt.fail()
    }
    const ok = throttle.reserve(['k'])
    if (!ok.allowed) throw new Error('refused')
    ok.attempt.succeed(['k'])
    expect([1, 2, 3].map(() => throttle.reserve(['k']).allowed)).toEqual([true, true, true])
  })

  it('reserves on every key or none, and forgets keys after forgetAfterMs', () => {
    const clock = new ManualClock()
    const throttle = new BackoffThrottle({ policy, clock })
    for (let i = 0; i < 3; i++) {
      const r = throttle.reserve(['busy'])
      if (r.allowed) r.attempt.fail()
    }
    expect(throttle.reserve(['other', 'busy']).allowed).toBe(false)
    // Nothing was reserved on `other`: its three free attempts are intact.
    expect([1, 2, 3].map(() => throttle.reserve(['other']).allowed)).toEqual([true, true, true])
    clock.advance(61 * MINUTE)
    expect(throttle.reserve(['busy']).allowed).toBe(true)
  })
})
