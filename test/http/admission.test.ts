/**
 * Admission under concurrency: limits are decided and counted in one step, so parallel
 * requests cannot all pass a check made before any of them counted. Run with in-process
 * limiters and again with the shared Redis ones.
 */
import { randomBytes } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { generateApiKey } from '../../src/domain/api-key.js'
import { createApiKey, setOrganisationStatus } from '../../src/storage/access-repository.js'
import { listDisclosures } from '../../src/storage/disclosure-log.js'
import { rawRequest } from '../support/raw-http.js'
import { REDIS_URL } from '../support/services.js'
import { bearer, buildTestApp, STUDENTS, type TestContext } from '../helper.js'

const STORES = [
  { name: 'in-process limiters', env: () => ({}) },
  // A generous command timeout: on a loaded machine hundreds of parallel decisions can take longer
  // than the default 250 ms, and the limiter would then decide alone (by design) and the exact
  // counts below would not be Redis's.
  ...(REDIS_URL === ''
    ? []
    : [
        {
          name: 'Redis limiters',
          env: () => ({
            REDIS_URL,
            REDIS_KEY_PREFIX: `t-${randomBytes(6).toString('hex')}:`,
            REDIS_COMMAND_TIMEOUT_MS: '10000',
          }),
        },
      ]),
]

/** Counts the key lookups that go to storage (the cache's own method, wrapped). */
function countLookups(t: TestContext): { readonly count: number } {
  const keys = t.app.services.keys
  const lookup = keys.lookup.bind(keys)
  const counter = { count: 0 }
  keys.lookup = (hash: string) => {
    const found = lookup(hash)
    if (found instanceof Promise) counter.count++
    return found
  }
  return counter
}

const statuses = (responses: { statusCode: number }[]) => {
  const counts: Record<number, number> = {}
  for (const { statusCode } of responses) counts[statusCode] = (counts[statusCode] ?? 0) + 1
  return counts
}

for (const store of STORES) {
  describe(`admission with ${store.name}`, () => {
    let t: TestContext
    afterEach(async () => t?.close())

    it('200 parallel unknown keys from one address: exactly the failure limit get 401, the rest 429, and only those reach storage', async () => {
      t = await buildTestApp({ env: { ...store.env(), AUTH_FAILURE_LIMIT: '30' } })
      const lookups = countLookups(t)
      const responses = await Promise.all(
        Array.from({ length: 200 }, () => t.call({ url: '/api/v1/tiers', headers: bearer(generateApiKey().key) })),
      )
      expect(statuses(responses)).toEqual({ 401: 30, 429: 170 })
      for (const refused of responses.filter((r) => r.statusCode === 429)) {
        expect(refused.json().code).toBe('too_many_failed_authentications')
        expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)
      }
      expect(lookups.count).toBe(30)
      // Blocked now: 300 more cost no storage at all, and a valid key from the address is refused too.
      const more = await Promise.all(
        Array.from({ length: 300 }, () => t.call({ url: '/api/v1/tiers', headers: bearer(generateApiKey().key) })),
      )
      expect(statuses(more)).toEqual({ 429: 300 })
      expect(lookups.count).toBe(30)
      expect((await t.call({ url: '/api/v1/tiers', headers: bearer(t.fixtures.keys.catalog) })).statusCode).toBe(429)
    })

    it('parallel requests with valid keys whose lookups are in flight do not use up the failure limit', async () => {
      t = await buildTestApp({ env: { ...store.env(), AUTH_FAILURE_LIMIT: '3' } })
      const lookups = countLookups(t)
      const { keys } = t.fixtures
      // One key on 64 connections at once (a cold cache) shares one lookup and one reservation;
      // three keys at once hold three: neither reaches the limit of 3 failures.
      const same = await Promise.all(
        Array.from({ length: 64 }, () => t.call({ url: '/api/v1/lessons', headers: bearer(keys.read) })),
      )
      expect(statuses(same)).toEqual({ 200: 64 })
      expect(lookups.count).toBe(1)
      const three = await Promise.all(
        [keys.catalog, keys.write, keys.otherOrg].map((key) => t.call({ url: '/api/v1/tiers', headers: bearer(key) })),
      )
      expect(statuses(three)).toEqual({ 200: 3 })
      // Nothing was held back: three failures are still allowed, the fourth is refused.
      const failures = await Promise.all(
        Array.from({ length: 4 }, () => t.call({ url: '/api/v1/tiers', headers: bearer(generateApiKey().key) })),
      )
      expect(statuses(failures)).toEqual({ 401: 3, 429: 1 })
    })

    it("an organisation's keys together get the organisation limit; a request it refuses does not use the key's own", async () => {
      t = await buildTestApp({ env: { ...store.env(), RATE_LIMIT: '4', ORGANISATION_RATE_LIMIT: '10' } })
      const now = t.clock.now()
      const extra = await Promise.all(
        Array.from({ length: 3 }, (_, i) =>
          createApiKey(
            t.storage.db,
            { organisationId: t.fixtures.orgs.acme, name: `extra ${i}`, scopes: [], expiresAt: null },
            now,
          ),
        ),
      )
      const acmeKeys = [t.fixtures.keys.catalog, t.fixtures.keys.read, ...extra.map((made) => made.key)]
      // 5 keys x 4 requests in parallel: 20 the keys would allow, 10 the organisation does.
      const responses = await Promise.all(
        acmeKeys.flatMap((key) =>
          Array.from({ length: 4 }, () => t.call({ url: '/api/v1/tiers', headers: bearer(key) })),
        ),
      )
      expect(statuses(responses)).toEqual({ 200: 10, 429: 10 })
      const refused = responses.find((r) => r.statusCode === 429)!
      expect(refused.json().code).toBe('rate_limited')
      expect(refused.json().detail).toContain('organisation')
      expect(refused.headers['retry-after']).toBe('60')
      expect(refused.headers.ratelimit).toMatch(/"organisation";r=0;t=60$/)
      expect(refused.headers['x-ratelimit-remaining']).toBe('0')
      // Another organisation is untouched.
      expect((await t.call({ url: '/api/v1/tiers', headers: bearer(t.fixtures.keys.otherOrg) })).statusCode).toBe(200)
      // Redis keeps its own time; the rest needs the test's clock.
      if (store.name !== 'in-process limiters') return
      // The window moves on: each key's own count holds only the requests the organisation admitted.
      t.clock.advance(60_001)
      const fresh = await t.call({ url: '/api/v1/tiers', headers: bearer(acmeKeys[0]!) })
      expect(fresh.statusCode).toBe(200)
      expect(fresh.headers.ratelimit).toBe('"default";r=3;t=60, "organisation";r=9;t=60')
    })
  })
}

describe('refusals after identification are disclosed', () => {
  let t: TestContext
  afterEach(async () => t?.close())

  it('records a rate-limited student request and a suspended organisation’s, with their outcomes', async () => {
    t = await buildTestApp({ env: { RATE_LIMIT: '2' } })
    const key = bearer(t.fixtures.keys.readWrite)
    const url = `/api/v1/students/${STUDENTS.ada}/progress`
    const answers = []
    for (let i = 0; i < 3; i++) answers.push((await t.call({ url, headers: key })).statusCode)
    expect(answers).toEqual([200, 200, 429])
    const enroll = await t.call({
      method: 'POST',
      url: `/api/v1/students/${STUDENTS.ada}/enroll`,
      headers: key,
      payload: { tier: 'builder' },
    })
    expect(enroll.statusCode).toBe(429)

    await setOrganisationStatus(t.storage.db, t.fixtures.orgs.beta, 'suspended')
    t.app.services.keys.evictOrganisation(t.fixtures.orgs.beta)
    const suspended = await t.call({
      url: `/api/v1/students/${STUDENTS.cleo}/progress`,
      headers: bearer(t.fixtures.keys.otherOrg),
    })
    expect(suspended.statusCode).toBe(403)

    const ada = await listDisclosures(t.storage.db, { studentId: STUDENTS.ada })
    expect(ada.map((row) => `${row.action} ${row.outcome}`).sort()).toEqual([
      'enroll denied_rate_limit',
      'progress.read denied_rate_limit',
      'progress.read disclosed',
      'progress.read disclosed',
    ])
    const cleo = await listDisclosures(t.storage.db, { studentId: STUDENTS.cleo })
    expect(cleo.map((row) => `${row.action} ${row.outcome} ${row.organisation_id}`)).toEqual([
      `progress.read denied_suspended ${t.fixtures.orgs.beta}`,
    ])
    // A catalog request names no student: nothing recorded for it.
    const before = (await listDisclosures(t.storage.db)).length
    expect((await t.call({ url: '/api/v1/tiers', headers: key })).statusCode).toBe(429)
    expect((await listDisclosures(t.storage.db)).length).toBe(before)
  })
})

describe('the fast path decides as the router does', () => {
  let t: TestContext
  afterEach(async () => t?.close())

  it('a blocked address sending unknown keys to catalog URLs causes no storage lookup', async () => {
    t = await buildTestApp({ env: { AUTH_FAILURE_LIMIT: '5' } })
    const lookups = countLookups(t)
    const send = () =>
      rawRequest(t.base, '/api/v1/tiers', { headers: { authorization: `Bearer ${generateApiKey().key}` } })
    const first = await Promise.all(Array.from({ length: 20 }, send))
    expect(first.filter((r) => r.status === 401).length).toBe(5)
    expect(first.filter((r) => r.status === 429).length).toBe(15)
    const blocked = await Promise.all(Array.from({ length: 100 }, send))
    expect(blocked.every((r) => r.status === 429)).toBe(true)
    expect(lookups.count).toBe(5)
  })
})
