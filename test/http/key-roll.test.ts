/**
 * A rolled key over a real socket, on this run's request path and engine: both keys work until
 * the end; every answer to the old key (a catalog read, a student read, an enroll, a refusal)
 * carries `Deprecation` and `Sunset`, the new key's none; requests racing across the end get
 * either a 200 with the headers or a 401, and none after it succeeds; another instance learns of
 * the roll at its next poll and stops the old key at the same instant.
 */
import { describe, expect, it } from 'vitest'
import { rollKey } from '../../src/cases/api-keys.js'
import { findApiKey } from '../../src/storage/access-repository.js'
import type { HttpResponse } from '../support/http-client.js'
import { bearer, buildTestApp, listeningApp, STUDENTS, testConfig } from '../helper.js'
import { perTest } from '../support/built.js'

const HOUR = 3_600_000
const LIMITS = { RATE_LIMIT: '100000', ORGANISATION_RATE_LIMIT: '100000', AUTH_FAILURE_LIMIT: '1000' }

describe('a rolled key', () => {
  const t = perTest(() => buildTestApp({ env: LIMITS }))

  const tiers = (key: string) => t.call({ url: '/api/v1/tiers', headers: bearer(key) })
  const progress = (key: string) => t.call({ url: `/api/v1/students/${STUDENTS.ada}/progress`, headers: bearer(key) })

  async function roll(name: 'read' | 'readWrite', end: number) {
    const key = (await findApiKey(t.storage.db, t.fixtures.keyIds[name]))!
    const rolled = await rollKey(t.storage.db, { key, end }, t.clock.now())
    await t.app.services.changes.check()
    return rolled
  }

  function expectSunset(response: HttpResponse, rolledAt: number, end: number): void {
    expect(response.headers.deprecation).toBe(`@${Math.floor(rolledAt / 1000)}`)
    expect(response.headers.sunset).toBe(new Date(end).toUTCString())
    expect(String(response.headers['access-control-expose-headers'])).toMatch(/Deprecation, Sunset/)
  }

  it('works beside its replacement until the end, and says when it stops on every answer', async () => {
    const rolledAt = t.clock.now()
    const end = rolledAt + 24 * HOUR
    const { key: replacement } = await roll('readWrite', end)
    const old = t.fixtures.keys.readWrite
    for (const response of [await tiers(old), await progress(old)]) {
      expect(response.statusCode).toBe(200)
      expectSunset(response, rolledAt, end)
    }
    const enroll = await t.call({
      method: 'POST',
      url: `/api/v1/students/${STUDENTS.ada}/enroll`,
      headers: bearer(old),
      payload: { tier: 'builder' },
    })
    expect(enroll.statusCode).toBe(200)
    expectSunset(enroll, rolledAt, end)
    // A refusal after identification says it too (a student the organisation cannot see).
    const refused = await t.call({ url: `/api/v1/students/${STUDENTS.cleo}/progress`, headers: bearer(old) })
    expect(refused.statusCode).toBe(404)
    expectSunset(refused, rolledAt, end)
    for (const response of [await tiers(replacement), await progress(replacement)]) {
      expect(response.statusCode).toBe(200)
      expect(response.headers.deprecation).toBeUndefined()
      expect(response.headers.sunset).toBeUndefined()
    }
    t.clock.set(end)
    const after = await tiers(old)
    expect(after.statusCode).toBe(401)
    expect(after.json().code).toBe('api_key_expired')
    expect((await progress(replacement)).statusCode).toBe(200)
  })

  it('stops at once when rolled "now" (a leaked key)', async () => {
    const { key: replacement } = await roll('read', t.clock.now())
    const refused = await progress(t.fixtures.keys.read)
    expect(refused.statusCode).toBe(401)
    expect(refused.json().code).toBe('api_key_revoked')
    expect((await progress(replacement)).statusCode).toBe(200)
  })

  it('answers requests racing across the end with a 200 carrying the end or a 401, and nothing after it', async () => {
    const end = t.clock.now() + HOUR
    await roll('read', end)
    const old = t.fixtures.keys.read
    t.clock.set(end - 1)
    const before = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? tiers(old) : progress(old)))
    // The clock passes the end while those are in flight.
    await Promise.resolve()
    t.clock.set(end)
    const after = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? tiers(old) : progress(old)))
    const early = await Promise.all(before)
    for (const response of early) {
      if (response.statusCode === 200) expect(response.headers.sunset).toBe(new Date(end).toUTCString())
      else expect([response.statusCode, response.json().code]).toEqual([401, 'api_key_expired'])
    }
    for (const response of await Promise.all(after)) {
      expect([response.statusCode, response.json().code]).toEqual([401, 'api_key_expired'])
    }
  })

  it('is seen by another instance at its next poll, which stops the old key at the same instant', async () => {
    const other = await listeningApp({
      config: testConfig(LIMITS),
      storage: t.storage,
      clock: t.clock,
      logger: false,
      pollChanges: false,
    })
    try {
      const old = t.fixtures.keys.read
      const onOther = () => other.client.request({ url: '/api/v1/tiers', headers: bearer(old) })
      // The other instance holds the key in its cache from before the roll.
      expect((await onOther()).headers.sunset).toBeUndefined()
      const end = t.clock.now() + HOUR
      await roll('read', end)
      await other.app.services.changes.check()
      expect((await onOther()).headers.sunset).toBe(new Date(end).toUTCString())
      t.clock.set(end)
      expect((await onOther()).statusCode).toBe(401)
      expect((await tiers(old)).statusCode).toBe(401)
    } finally {
      await other.close()
    }
  })
})
