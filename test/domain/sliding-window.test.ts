import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ManualClock } from '../../src/clock.js'
import { SlidingWindowLimiter } from '../../src/domain/sliding-window.js'

describe('SlidingWindowLimiter', () => {
  it('never accepts more than the limit in any window (model check against brute force)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 3000 }), { minLength: 1, maxLength: 300 }),
        fc.integer({ min: 1, max: 20 }),
        (gaps, limit) => {
          const clock = new ManualClock(0)
          const windowMs = 1000
          const limiter = new SlidingWindowLimiter({ limit, windowMs, clock })
          const accepted: number[] = []
          for (const gap of gaps) {
            clock.advance(gap)
            const now = clock.now()
            const decision = limiter.hit('k')
            const inWindow = accepted.filter((at) => at > now - windowMs).length
            // Accepted exactly when fewer than `limit` were accepted in (now - window, now].
            expect(decision.allowed).toBe(inWindow < limit)
            if (decision.allowed) accepted.push(now)
            expect(decision.remaining).toBe(limit - accepted.filter((at) => at > now - windowMs).length)
            const oldest = accepted.find((at) => at > now - windowMs)
            expect(decision.resetMs).toBe(oldest === undefined ? 0 : oldest + windowMs - now)
          }
        },
      ),
    )
  })

  it('peek does not record', () => {
    const clock = new ManualClock(0)
    const limiter = new SlidingWindowLimiter({ limit: 1, windowMs: 1000, clock })
    expect(limiter.peek('k').allowed).toBe(true)
    expect(limiter.peek('k').allowed).toBe(true)
    expect(limiter.hit('k').allowed).toBe(true)
    expect(limiter.peek('k').allowed).toBe(false)
  })

  it('forgets idle keys when swept', () => {
    const clock = new ManualClock(0)
    const limiter = new SlidingWindowLimiter({ limit: 5, windowMs: 1000, clock })
    for (let i = 0; i < 100; i++) limiter.hit(`key-${i}`)
    expect(limiter.size).toBe(100)
    clock.advance(999)
    limiter.sweep()
    expect(limiter.size).toBe(100)
    clock.advance(1)
    limiter.sweep()
    expect(limiter.size).toBe(0)
  })

  it('keeps memory bounded for a key hammering far past its limit', () => {
    const clock = new ManualClock(0)
    const limiter = new SlidingWindowLimiter({ limit: 100, windowMs: 60_000, clock })
    let accepted = 0
    for (let i = 0; i < 100_000; i++) {
      clock.advance(7)
      if (limiter.hit('k').allowed) accepted++
    }
    // 700 s of traffic: at most 100 per 60 s (12 windows fit, plus the partial one).
    expect(accepted).toBeLessThanOrEqual(100 * Math.ceil(700 / 60))
    expect(accepted).toBeGreaterThan(100 * Math.floor(700 / 60))
  })

  it('refuses nonsense options', () => {
    const clock = new ManualClock(0)
    expect(() => new SlidingWindowLimiter({ limit: 0, windowMs: 1, clock })).toThrow(RangeError)
    expect(() => new SlidingWindowLimiter({ limit: 1, windowMs: 0, clock })).toThrow(RangeError)
  })
})
