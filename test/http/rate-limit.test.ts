/**
 * The per-key limit is a rolling window, tested with an injected clock (never by sleeping).
 */
import { afterEach, describe, expect, it } from 'vitest'
import { bearer, buildTestApp, type TestContext } from '../helper.js'

function header(res: { headers: Record<string, unknown> }, name: string): string {
  return String(res.headers[name])
}

describe('per-key rate limit', () => {
  let t: TestContext
  afterEach(async () => t.close())

  it('accepts 100 requests in any 60 s and refuses the 101st with Retry-After', async () => {
    t = await buildTestApp()
    const key = bearer(t.fixtures.keys.catalog)
    const start = t.clock.now()
    for (let i = 0; i < 100; i++) {
      const res = await t.call({ url: '/api/v1/tiers', headers: key })
      expect(res.statusCode).toBe(200)
      expect(header(res, 'x-ratelimit-remaining')).toBe(String(99 - i))
      const reset = i === 0 ? 60 : Math.ceil((start + 60_000 - t.clock.now()) / 1000)
      // The organisation's other keys made no request: its policy is 200 ahead of the key's.
      expect(header(res, 'ratelimit')).toBe(`"default";r=${99 - i};t=${reset}, "organisation";r=${299 - i};t=${reset}`)
      expect(header(res, 'ratelimit-policy')).toBe('"default";q=100;w=60, "organisation";q=300;w=60')
      expect(header(res, 'x-ratelimit-limit')).toBe('100')
      t.clock.advance(100) // 100 requests over 10 s
    }
    // Now at start + 10 s; the first request leaves the window at start + 60 s.
    const refused = await t.call({ url: '/api/v1/tiers', headers: key })
    expect(refused.statusCode).toBe(429)
    expect(refused.json().code).toBe('rate_limited')
    expect(header(refused, 'retry-after')).toBe('50')
    expect(header(refused, 'ratelimit')).toBe('"default";r=0;t=50')
    expect(header(refused, 'x-ratelimit-remaining')).toBe('0')
    expect(header(refused, 'x-ratelimit-reset')).toBe(String(Math.ceil((start + 60_000) / 1000)))

    // One millisecond before the first request leaves the window: still refused.
    t.clock.set(start + 59_999)
    expect((await t.call({ url: '/api/v1/tiers', headers: key })).statusCode).toBe(429)
    // Exactly when it leaves, one request (and only one) is accepted again.
    t.clock.set(start + 60_000)
    expect((await t.call({ url: '/api/v1/tiers', headers: key })).statusCode).toBe(200)
    expect((await t.call({ url: '/api/v1/tiers', headers: key })).statusCode).toBe(429)
  })

  it('is a rolling window, not fixed minute buckets', async () => {
    t = await buildTestApp()
    const key = bearer(t.fixtures.keys.catalog)
    const start = t.clock.now()
    // 50 at 0 s and 50 at 45 s: a fixed-bucket limiter starting a new minute at 60 s would let
    // 100 more through at 61 s; the rolling window allows only the 50 that left.
    for (let i = 0; i < 50; i++) await t.call({ url: '/api/v1/tiers', headers: key })
    t.clock.set(start + 45_000)
    for (let i = 0; i < 50; i++) await t.call({ url: '/api/v1/tiers', headers: key })
    t.clock.set(start + 61_000)
    let accepted = 0
    for (let i = 0; i < 100; i++)
      if ((await t.call({ url: '/api/v1/tiers', headers: key })).statusCode === 200) accepted++
    expect(accepted).toBe(50)
    // Retry-After is never early: waiting exactly that long gets the next request in.
    const refused = await t.call({ url: '/api/v1/tiers', headers: key })
    const wait = Number(header(refused, 'retry-after'))
    expect(wait).toBe(44) // the 45 s batch leaves at 105 s
    t.clock.advance(wait * 1000)
    expect((await t.call({ url: '/api/v1/tiers', headers: key })).statusCode).toBe(200)
  })

  it('counts every authenticated request whatever its status, except 429s', async () => {
    t = await buildTestApp({ env: { RATE_LIMIT: '10' } })
    const key = bearer(t.fixtures.keys.catalog)
    const statuses = []
    for (const url of [
      '/api/v1/tiers',
      '/api/v1/lessons?tier=bad',
      '/api/v1/nothing-here',
      '/api/v1/students/x/progress',
      '/api/v1/lessons/explorer/e9-none',
    ]) {
      statuses.push((await t.call({ url, headers: key })).statusCode)
    }
    expect(statuses).toEqual([200, 400, 404, 403, 404])
    for (let i = 0; i < 5; i++) expect((await t.call({ url: '/api/v1/tiers', headers: key })).statusCode).toBe(200)
    // Refused requests do not extend the wait.
    for (let i = 0; i < 20; i++) expect((await t.call({ url: '/api/v1/tiers', headers: key })).statusCode).toBe(429)
    t.clock.advance(60_000)
    for (let i = 0; i < 10; i++) expect((await t.call({ url: '/api/v1/tiers', headers: key })).statusCode).toBe(200)
  })

  it('keeps each key to its own window', async () => {
    t = await buildTestApp({ env: { RATE_LIMIT: '3' } })
    for (let i = 0; i < 3; i++) await t.call({ url: '/api/v1/tiers', headers: bearer(t.fixtures.keys.catalog) })
    expect((await t.call({ url: '/api/v1/tiers', headers: bearer(t.fixtures.keys.catalog) })).statusCode).toBe(429)
    expect((await t.call({ url: '/api/v1/tiers', headers: bearer(t.fixtures.keys.read) })).statusCode).toBe(200)
  })

  it('follows the configured limit and window in its headers', async () => {
    t = await buildTestApp({ env: { RATE_LIMIT: '7', RATE_LIMIT_WINDOW_SECONDS: '10' } })
    const res = await t.call({ url: '/api/v1/tiers', headers: bearer(t.fixtures.keys.catalog) })
    expect(header(res, 'ratelimit-policy')).toBe('"default";q=7;w=10, "organisation";q=300;w=10')
    expect(header(res, 'ratelimit')).toBe('"default";r=6;t=10, "organisation";r=299;t=10')
  })
})

describe('failed authentication limit per client address', () => {
  let t: TestContext
  afterEach(async () => t.close())

  it('refuses an address that keeps failing, then lets it back after the window', async () => {
    t = await buildTestApp({ env: { AUTH_FAILURE_LIMIT: '5' } })
    const attacker = '203.0.113.7'
    for (let i = 0; i < 5; i++) {
      const res = await t.call({ url: '/api/v1/tiers', headers: bearer(`guess-${i}`), remoteAddress: attacker })
      expect(res.statusCode).toBe(401)
    }
    const blocked = await t.call({ url: '/api/v1/tiers', headers: bearer('guess-6'), remoteAddress: attacker })
    expect(blocked.statusCode).toBe(429)
    expect(blocked.json().code).toBe('too_many_failed_authentications')
    expect(Number(header(blocked, 'retry-after'))).toBe(60)
    // Even a valid key is not checked from that address: a lucky guess would prove nothing.
    const valid = await t.call({
      url: '/api/v1/tiers',
      headers: bearer(t.fixtures.keys.catalog),
      remoteAddress: attacker,
    })
    expect(valid.statusCode).toBe(429)
    // Other addresses are unaffected.
    const other = await t.call({
      url: '/api/v1/tiers',
      headers: bearer(t.fixtures.keys.catalog),
      remoteAddress: '198.51.100.2',
    })
    expect(other.statusCode).toBe(200)
    t.clock.advance(60_000)
    const later = await t.call({
      url: '/api/v1/tiers',
      headers: bearer(t.fixtures.keys.catalog),
      remoteAddress: attacker,
    })
    expect(later.statusCode).toBe(200)
  })

  it('does not count successful requests', async () => {
    t = await buildTestApp({ env: { AUTH_FAILURE_LIMIT: '2' } })
    for (let i = 0; i < 20; i++) {
      expect(
        (await t.call({ url: '/api/v1/tiers', headers: bearer(t.fixtures.keys.catalog), remoteAddress: '203.0.113.9' }))
          .statusCode,
      ).toBe(200)
    }
  })
})
