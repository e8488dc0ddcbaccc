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

  it('keeps every key exact through hits, peeks, released reservations and sweeps (model check)', () => {
    const operation = fc.record({
      key: fc.integer({ min: 0, max: 4 }),
      gap: fc.integer({ min: 0, max: 400 }),
      kind: fc.constantFrom('hit', 'peek', 'reserve', 'release', 'sweep'),
    })
    fc.assert(
      fc.property(
        fc.array(operation, { minLength: 1, maxLength: 400 }),
        fc.integer({ min: 1, max: 12 }),
        (ops, limit) => {
          const clock = new ManualClock(0)
          const windowMs = 1000
          const limiter = new SlidingWindowLimiter({ limit, windowMs, clock })
          const accepted = new Map<string, number[]>()
          for (const { key: k, gap, kind } of ops) {
            clock.advance(gap)
            const key = `key-${k}`
            const now = clock.now()
            if (kind === 'sweep') {
              limiter.sweep()
              continue
            }
            const times = (accepted.get(key) ?? []).filter((at) => at > now - windowMs)
            const decision =
              kind === 'peek'
                ? limiter.peek(key, now)
                : kind === 'hit'
                  ? limiter.hit(key, now)
                  : limiter.reserve(key, now)
            expect(decision.allowed).toBe(times.length < limit)
            if (decision.allowed && kind !== 'peek') times.push(now)
            if (decision.allowed && kind === 'release') {
              ;(decision as ReturnType<SlidingWindowLimiter['reserve']>).release()
              times.splice(times.lastIndexOf(now), 1)
            }
            accepted.set(key, times)
            const held = kind === 'release' ? times.length + 1 : times.length
            expect(decision.remaining).toBe(Math.max(0, limit - held))
            const oldest = kind === 'release' && decision.allowed ? Math.min(times[0] ?? now, now) : times[0]
            expect(decision.resetMs).toBe(oldest === undefined ? 0 : oldest + windowMs - now)
          }
        },
      ),
    )
  })

  it('stays exact after idle keys are swept and the store is packed again', () => {
    const clock = new ManualClock(0)
    const limiter = new SlidingWindowLimiter({ limit: 5, windowMs: 1000, clock })
    for (let round = 0; round < 4; round++) for (let i = 0; i < 3000; i++) limiter.hit(`key-${i}`)
    clock.advance(500)
    for (let i = 0; i < 10; i++) limiter.hit(`key-${i}`)
    clock.advance(500)
    // Only keys 0-9 hit within the last second; the other 2,990 logs are freed and the rest packed.
    limiter.sweep()
    expect(limiter.size).toBe(10)
    for (let i = 0; i < 10; i++) {
      const decision = limiter.hit(`key-${i}`)
      expect(decision).toMatchObject({ allowed: true, remaining: 3, resetMs: 500 })
    }
    expect(limiter.hit('key-0')).toMatchObject({ allowed: true, remaining: 2 })
    expect(limiter.hit('key-0')).toMatchObject({ allowed: true, remaining: 1 })
    expect(limiter.hit('key-0')).toMatchObject({ allowed: true, remaining: 0 })
    expect(limiter.hit('key-0')).toMatchObject({ allowed: false, remaining: 0, resetMs: 500 })
    expect(limiter.hit('key-2999').remaining).toBe(4)
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
