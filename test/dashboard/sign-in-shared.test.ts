/**
 * With REDIS_URL, sign-in failures also feed windows shared by every instance: an address that
 * used up its attempts on one instance is refused on the next one, which has never seen it.
 */
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestContext } from '../helper.js'
import { REDIS_URL } from '../support/services.js'
import { DashboardClient } from './dashboard-client.js'

describe.skipIf(REDIS_URL === '')('dashboard sign-in limits shared through Redis', () => {
  let first: TestContext
  let second: TestContext

  beforeAll(async () => {
    // A generous command timeout, as in admission.test.ts: past the default 250 ms on a loaded
    // machine an instance would count alone for a second (the designed fallback).
    const env = {
      REDIS_URL,
      REDIS_KEY_PREFIX: `test-${randomBytes(6).toString('hex')}:`,
      SIGN_IN_FAILURE_LIMIT: '5',
      REDIS_COMMAND_TIMEOUT_MS: '10000',
    }
    first = await buildTestApp({ env })
    second = await buildTestApp({ env })
  })
  afterAll(async () => {
    await first?.close()
    await second?.close()
  })

  it('refuses on a second instance the pair that failed on the first, and nobody else', async () => {
    const attacker = new DashboardClient(first.app, '203.0.113.9')
    for (let i = 0; i < 5; i++)
      expect((await attacker.signIn('ops@example.org', `wrong password ${i}`)).statusCode).toBe(401)
    const elsewhere = await new DashboardClient(second.app, '203.0.113.9').signIn(
      'ops@example.org',
      'another wrong one',
    )
    expect(elsewhere.statusCode).toBe(429)
    expect(Number(elsewhere.headers['retry-after'])).toBeGreaterThan(0)
    expect(
      (await new DashboardClient(second.app, '192.0.2.9').signIn('ops@example.org', 'a wrong password too')).statusCode,
    ).toBe(401)
  })
})
