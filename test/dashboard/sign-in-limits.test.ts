/**
 * Sign-in limits under the attacks that beat them: concurrent guesses, a flood of password
 * hashes from one address, and wrong passwords sent to lock the operator out. Real HTTP through
 * the app (inject), a manual clock for the delays: nothing here sleeps.
 */
import type { LightMyRequestResponse } from 'fastify'
import { beforeAll, describe, expect, it } from 'vitest'
import { hashPassword } from '../../src/domain/passwords.js'
import { HASH_CONCURRENCY, HASH_QUEUE } from '../../src/dashboard/sign-in-guard.js'
import { createAccount } from '../../src/storage/account-repository.js'
import { buildTestApp } from '../helper.js'
import { DashboardClient } from './dashboard-client.js'
import { perSuite } from '../support/built.js'

const OPERATOR = 'ops@example.org'
const PASSWORD = 'operator password 2026'

function tally(responses: LightMyRequestResponse[]): Record<number, number> {
  const counts: Record<number, number> = {}
  for (const res of responses) counts[res.statusCode] = (counts[res.statusCode] ?? 0) + 1
  return counts
}

/** Refusals must say when to come back (RFC 9110 section 10.2.3). */
function expectRetryAfter(responses: LightMyRequestResponse[]): void {
  for (const res of responses.filter((r) => r.statusCode === 429 || r.statusCode === 503)) {
    expect(Number(res.headers['retry-after']), `Retry-After on ${res.statusCode}`).toBeGreaterThan(0)
  }
}

describe('dashboard sign-in limits', () => {
  const t = perSuite(() => buildTestApp({ env: { SIGN_IN_FAILURE_LIMIT: '5' } }))

  beforeAll(async () => {
    await createAccount(
      t.storage.db,
      { email: OPERATOR, passwordHash: await hashPassword(PASSWORD), role: 'operator' },
      t.clock.now(),
    )
  })

  it('30 concurrent guesses for one account get no more checks than the limit allows', async () => {
    const attacker = new DashboardClient(t.app, '203.0.113.1')
    const token = await attacker.csrf()
    // 29 wrong passwords and, last, the right one: all sent at once.
    const guesses = Array.from({ length: 30 }, (_, i) => (i === 29 ? PASSWORD : `wrong guess number ${i}`))
    const responses = await Promise.all(
      guesses.map((password) => attacker.post('/dashboard/login', { _csrf: token, email: OPERATOR, password })),
    )
    const counts = tally(responses)
    const checked = (counts[401] ?? 0) + (counts[303] ?? 0)
    const refused = (counts[429] ?? 0) + (counts[503] ?? 0)
    console.info(`30 concurrent guesses: ${refused} refused of 30, ${checked} checked (${JSON.stringify(counts)})`)
    expect(checked).toBeLessThanOrEqual(5)
    expect(refused).toBe(30 - checked)
    expect(responses[29]!.statusCode, 'the right password, sent beyond the limit').not.toBe(303)
    expectRetryAfter(responses)
  })

  it('after the limit, 30 concurrent sign-ins with the right password are all refused', async () => {
    const attacker = new DashboardClient(t.app, '203.0.113.2')
    const token = await attacker.csrf()
    for (let i = 0; i < 5; i++)
      expect(
        (await attacker.post('/dashboard/login', { _csrf: token, email: OPERATOR, password: `wrong ${i} password` }))
          .statusCode,
      ).toBe(401)
    const responses = await Promise.all(
      Array.from({ length: 30 }, () =>
        attacker.post('/dashboard/login', { _csrf: token, email: OPERATOR, password: PASSWORD }),
      ),
    )
    console.info(`after the limit: ${tally(responses)[429] ?? 0} refused of 30`)
    expect(tally(responses)).toEqual({ 429: 30 })
    expectRetryAfter(responses)
  })

  it('a flood of 40 sign-ins from one address leaves another address’s sign-in a free hash slot', async () => {
    const flooder = new DashboardClient(t.app, '203.0.113.3')
    const operator = new DashboardClient(t.app, '192.0.2.44')
    const [floodToken, operatorToken] = await Promise.all([flooder.csrf(), operator.csrf()])
    const flood = Array.from({ length: 40 }, (_, i) =>
      flooder.post('/dashboard/login', {
        _csrf: floodToken,
        email: `nobody${i}@example.org`,
        password: 'not the password at all',
      }),
    )
    const started = performance.now()
    const mine = await operator.post('/dashboard/login', { _csrf: operatorToken, email: OPERATOR, password: PASSWORD })
    const latency = performance.now() - started
    const responses = await Promise.all(flood)
    const counts = tally(responses)
    console.info(
      `flood of 40 from one address: ${JSON.stringify(counts)}; the other address's sign-in took ${Math.round(latency)} ms`,
    )
    expect(mine.statusCode).toBe(303)
    // One hash at a time per address: the flood is refused at once, not queued ahead of others.
    expect((counts[429] ?? 0) + (counts[503] ?? 0)).toBeGreaterThanOrEqual(30)
    expect(counts[401] ?? 0).toBeLessThanOrEqual(10)
    expectRetryAfter(responses)
  })

  it('bounds the hash queue: beyond it, sign-ins are refused with 503 and Retry-After', async () => {
    const clients = Array.from({ length: 40 }, (_, i) => new DashboardClient(t.app, `198.51.100.${100 + i}`))
    const tokens = await Promise.all(clients.map((client) => client.csrf()))
    const responses = await Promise.all(
      clients.map((client, i) =>
        client.post('/dashboard/login', {
          _csrf: tokens[i]!,
          email: `someone${i}@example.org`,
          password: 'not the password at all',
        }),
      ),
    )
    const counts = tally(responses)
    console.info(
      `40 addresses at once: ${JSON.stringify(counts)} (${HASH_CONCURRENCY} hashes at once, ${HASH_QUEUE} waiting)`,
    )
    expect(counts[503] ?? 0).toBeGreaterThanOrEqual(1)
    expect((counts[401] ?? 0) + (counts[503] ?? 0)).toBe(40)
    expect(counts[401] ?? 0).toBeGreaterThanOrEqual(HASH_CONCURRENCY + HASH_QUEUE)
    expectRetryAfter(responses)
  })

  it('50 wrong passwords from one address do not lock the operator out at theirs', async () => {
    const attacker = new DashboardClient(t.app, '203.0.113.4')
    const token = await attacker.csrf()
    const statuses = []
    for (let i = 0; i < 50; i++)
      statuses.push(
        (await attacker.post('/dashboard/login', { _csrf: token, email: OPERATOR, password: `wrong password ${i}` }))
          .statusCode,
      )
    expect(statuses.filter((s) => s === 401)).toHaveLength(5)
    expect(statuses.filter((s) => s === 429)).toHaveLength(45)
    const operator = new DashboardClient(t.app, '192.0.2.45')
    expect((await operator.signIn(OPERATOR, PASSWORD)).statusCode).toBe(303)
    // The attacker's address still waits, even with the right password.
    expect(
      (await attacker.post('/dashboard/login', { _csrf: token, email: OPERATOR, password: PASSWORD })).statusCode,
    ).toBe(429)
  })

  it('makes an address wait longer after each further failure instead of locking the account', async () => {
    const client = new DashboardClient(t.app, '203.0.113.5')
    const token = await client.csrf()
    const attempt = (password: string) => client.post('/dashboard/login', { _csrf: token, email: OPERATOR, password })
    for (let i = 0; i < 5; i++) expect((await attempt(`mistyped ${i} password`)).statusCode).toBe(401)
    const waits: number[] = []
    for (let i = 0; i < 3; i++) {
      const refused = await attempt('mistyped again password')
      expect(refused.statusCode).toBe(429)
      const wait = Number(refused.headers['retry-after'])
      waits.push(wait)
      t.clock.advance(wait * 1000)
      expect((await attempt(`mistyped later ${i}`)).statusCode).toBe(401)
    }
    expect(waits).toEqual([60, 120, 240])
    // The right password after the wait, and the slate is clean for this address.
    const refused = await attempt(PASSWORD)
    t.clock.advance(Number(refused.headers['retry-after']) * 1000)
    expect((await attempt(PASSWORD)).statusCode).toBe(303)
  })

  it('limits failures per address across accounts (credential stuffing)', async () => {
    const stuffer = new DashboardClient(t.app, '203.0.113.6')
    const token = await stuffer.csrf()
    for (let i = 0; i < 20; i++)
      expect(
        (
          await stuffer.post('/dashboard/login', {
            _csrf: token,
            email: `victim${i}@example.org`,
            password: 'password from a leak',
          })
        ).statusCode,
      ).toBe(401)
    const next = await stuffer.post('/dashboard/login', {
      _csrf: token,
      email: 'victim99@example.org',
      password: 'password from a leak',
    })
    expect(next.statusCode).toBe(429)
    expectRetryAfter([next])
  })
})
