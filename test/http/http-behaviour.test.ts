import SQLite from 'better-sqlite3'
import { beforeAll, describe, expect, it } from 'vitest'
import { sqliteFile } from '../../src/storage/sqlite/open-sqlite.js'
import { ManualClock } from '../../src/clock.js'
import { openStorage } from '../../src/storage/connection.js'
import {
  bearer,
  buildTestApp,
  createTestStorage,
  freshDatabaseUrl,
  listeningApp,
  seedFixtures,
  START,
  STUDENTS,
  testConfig,
} from '../helper.js'
import { perSuite } from '../support/built.js'

describe('HTTP behaviour', () => {
  const t = perSuite(() => buildTestApp({ env: { RATE_LIMIT: '100000', ORGANISATION_RATE_LIMIT: '100000' } }))
  let key: { authorization: string }
  beforeAll(async () => {
    key = bearer(t.fixtures.keys.readWrite)
  })

  it('gives every response its own X-Request-Id', async () => {
    const responses = await Promise.all([
      t.call({ url: '/api/v1/tiers', headers: key }),
      t.call({ url: '/api/v1/tiers' }),
      t.call({ url: '/nowhere' }),
      t.call({ url: '/healthz' }),
      t.call({ url: '/docs' }),
      t.call({ method: 'OPTIONS', url: '/api/v1/tiers' }),
    ])
    const ids = responses.map((res) => String(res.headers['x-request-id']))
    for (const id of ids) expect(id).toMatch(/^[0-9a-f-]{36}$/)
    expect(new Set(ids).size).toBe(ids.length)
    // A client's own id is not trusted: it would end up in the disclosure log.
    const spoofed = await t.call({ url: '/api/v1/tiers', headers: { ...key, 'x-request-id': 'spoofed' } })
    expect(spoofed.headers['x-request-id']).not.toBe('spoofed')
  })

  describe('unknown routes and methods', () => {
    it('answers unknown /api/v1 paths with 404 once authenticated, and 401 before', async () => {
      const known = await t.call({ url: '/api/v1/teachers', headers: key })
      expect(known.statusCode).toBe(404)
      expect(known.json().code).toBe('route_not_found')
      expect(known.headers.ratelimit).toBeDefined()
      const anonymous = await t.call({ url: '/api/v1/teachers' })
      expect(anonymous.statusCode).toBe(401)
    })

    it('answers other version prefixes with 404 naming v1', async () => {
      for (const url of ['/api/v2/tiers', '/api/v0/lessons', '/api/tiers', '/v1/tiers']) {
        const res = await t.call({ url, headers: key })
        expect(res.statusCode, url).toBe(404)
        expect(res.json().code).toBe('route_not_found')
      }
      expect((await t.call({ url: '/api/v2/tiers', headers: key })).json().detail).toContain('/api/v1')
    })

    it('answers a known path with a wrong method with 405 and Allow', async () => {
      const cases: [string, string, string][] = [
        ['DELETE', '/api/v1/tiers', 'GET, HEAD'],
        ['POST', '/api/v1/lessons', 'GET, HEAD'],
        ['PUT', '/api/v1/lessons/explorer/e1-robots-follow-instructions', 'GET, HEAD'],
        ['POST', `/api/v1/students/${STUDENTS.ada}/progress`, 'GET, HEAD'],
        ['GET', `/api/v1/students/${STUDENTS.ada}/enroll`, 'POST'],
        ['PATCH', `/api/v1/students/${STUDENTS.ada}/enroll`, 'POST'],
        ['DELETE', '/api/v1/students', 'GET, HEAD'],
        ['POST', '/api/v1/progress/changes', 'GET, HEAD'],
      ]
      for (const [method, url, allow] of cases) {
        const res = await t.call({ method: method as 'GET', url, headers: key })
        expect(res.statusCode, `${method} ${url}`).toBe(405)
        expect(res.headers.allow).toBe(allow)
        expect(res.json().code).toBe('method_not_allowed')
      }
    })
  })

  describe('CORS', () => {
    it('answers a preflight without a key', async () => {
      const res = await t.call({
        method: 'OPTIONS',
        url: `/api/v1/students/${STUDENTS.ada}/enroll`,
        headers: {
          origin: 'https://app.example.org',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization, content-type',
        },
      })
      expect(res.statusCode).toBe(204)
      expect(res.headers['access-control-allow-origin']).toBe('*')
      expect(res.headers['access-control-allow-methods']).toBe('POST')
      expect(String(res.headers['access-control-allow-headers'])).toMatch(/Authorization/)
      expect(String(res.headers['access-control-allow-headers'])).toMatch(/Content-Type/)
      expect(res.headers['access-control-max-age']).toBeDefined()
    })

    it('exposes the headers a browser client needs, on successes and errors alike', async () => {
      for (const res of [
        await t.call({ url: '/api/v1/tiers', headers: { ...key, origin: 'https://a.example' } }),
        await t.call({ url: '/api/v1/tiers', headers: { origin: 'https://a.example' } }),
      ]) {
        expect(res.headers['access-control-allow-origin']).toBe('*')
        const exposed = String(res.headers['access-control-expose-headers']).split(', ')
        for (const name of [
          'RateLimit',
          'RateLimit-Policy',
          'X-RateLimit-Limit',
          'X-RateLimit-Remaining',
          'X-RateLimit-Reset',
          'ETag',
          'Retry-After',
          'X-Request-Id',
        ]) {
          expect(exposed).toContain(name)
        }
      }
    })

    it('answers a plain OPTIONS with Allow', async () => {
      const res = await t.call({ method: 'OPTIONS', url: '/api/v1/lessons' })
      expect(res.statusCode).toBe(204)
      expect(res.headers.allow).toBe('GET, HEAD')
    })
  })

  describe('health and documentation', () => {
    it('serves liveness and readiness without a key', async () => {
      expect((await t.call({ url: '/healthz' })).json()).toEqual({ status: 'ok' })
      const ready = await t.call({ url: '/readyz' })
      expect(ready.statusCode).toBe(200)
      expect(ready.json()).toMatchObject({ status: 'ready', storage: { engine: t.storage.engine, status: 'up' } })
    })

    it('serves the reference and error pages as self-contained HTML under a strict CSP', async () => {
      for (const url of ['/docs', '/docs/errors']) {
        const res = await t.call({ url })
        expect(res.statusCode).toBe(200)
        expect(res.headers['content-type']).toMatch(/^text\/html/)
        expect(res.headers['content-security-policy']).toContain("default-src 'none'")
        expect(res.body).not.toMatch(/<script|https?:\/\/(?!localhost)/)
      }
      const reference = (await t.call({ url: '/docs' })).body
      for (const path of [
        '/api/v1/tiers',
        '/api/v1/lessons',
        '/api/v1/lessons/{slug}',
        '/api/v1/students/{id}/progress',
        '/api/v1/students/{id}/enroll',
        '/api/v1/students',
        '/api/v1/progress/changes',
      ]) {
        expect(reference).toContain(`<code>${path}</code>`)
      }
      expect(reference).toContain('curl')
      expect((await t.call({ url: '/docs/errors' })).body).toContain('id="rate_limited"')
    })
  })
})

describe('failures on our side', () => {
  it.skipIf(process.env.TEST_DATABASE_URL !== undefined)(
    'answers 503 with Retry-After when the SQLite database is locked, and discloses nothing',
    async () => {
      const url = freshDatabaseUrl()
      const setup = await createTestStorage({ url })
      const fixtures = await seedFixtures(setup, START)
      await setup.close()
      // A short busy timeout and wait for the lock, so the test does not wait long for it.
      const fast = openStorage(url, { busyTimeoutMs: 20, beginWaitMs: 100 })
      const clock = new ManualClock(START)
      const server = await listeningApp({
        config: testConfig({ RATE_LIMIT: '1000' }),
        storage: fast,
        clock,
        logger: false,
        // No background writes (sealer, webhooks) queueing behind the lock: each request waits only on its own.
        pollChanges: false,
      })
      // Both keys cached: on the fast path, the read and the enroll below are the fast path's to try.
      for (const key of [fixtures.keys.read, fixtures.keys.write])
        expect((await server.client.request({ url: '/api/v1/tiers', headers: bearer(key) })).statusCode).toBe(200)
      const disclosuresBefore = countDisclosures(url)
      const holder = new SQLite(sqliteFile(url))
      holder.exec('BEGIN EXCLUSIVE')
      try {
        const read = await server.client.request({
          url: `/api/v1/students/${STUDENTS.ada}/progress`,
          headers: bearer(fixtures.keys.read),
        })
        expect(read.statusCode).toBe(503)
        expect(read.json().code).toBe('storage_unavailable')
        expect(read.headers['retry-after']).toBe('2')
        const enroll = await server.client.request({
          method: 'POST',
          url: `/api/v1/students/${STUDENTS.ada}/enroll`,
          headers: bearer(fixtures.keys.write),
          payload: { tier: 'builder' },
        })
        expect(enroll.statusCode).toBe(503)
        // The catalog is served from memory all the same.
        expect(
          (await server.client.request({ url: '/api/v1/tiers', headers: bearer(fixtures.keys.read) })).statusCode,
        ).toBe(200)
      } finally {
        holder.exec('ROLLBACK')
        holder.close()
      }
      expect(countDisclosures(url)).toBe(disclosuresBefore)
      const after = await server.client.request({
        url: `/api/v1/students/${STUDENTS.ada}/progress`,
        headers: bearer(fixtures.keys.read),
      })
      expect(after.statusCode).toBe(200)
      await server.close()
      await fast.close()
    },
  )

  it('never leaks internals in a 500', async () => {
    const t = await buildTestApp()
    // Break the query layer underneath a running app: the next student read fails inside Kysely.
    await t.storage.db.schema.dropTable('progress').execute()
    const res = await t.call({
      url: `/api/v1/students/${STUDENTS.ada}/progress`,
      headers: bearer(t.fixtures.keys.read),
    })
    expect(res.statusCode).toBe(500)
    const body = res.json()
    expect(body.code).toBe('internal_error')
    expect(JSON.stringify(body)).not.toMatch(/progress|sqlite|SQL|table|stack|\.ts/i)
    expect(body.detail).toContain(body.requestId)
    await t.close()
  })
})

function countDisclosures(url: string): number {
  const db = new SQLite(sqliteFile(url), { readonly: true })
  try {
    return (db.prepare('select count(*) as n from disclosures').get() as { n: number }).n
  } finally {
    db.close()
  }
}
