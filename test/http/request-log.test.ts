/**
 * Both request paths log the same entries: two servers on one database, one with the fast path and
 * one without, get the same requests over real sockets, and each one's entries (found by the
 * request ids of its answers) must be alike field for field. No entry holds a student id, a query
 * value, a first name or a key; a request id from a real 403 problem finds its entry at once, for
 * its own organisation only; requests without a usable key are not logged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findRequest } from '../../src/cases/request-log.js'
import { ManualClock } from '../../src/clock.js'
import type { TypedApp } from '../../src/http/app-types.js'
import type { Storage } from '../../src/storage/connection.js'
import { pageRequestLog } from '../../src/storage/request-log-pages.js'
import type { PlacedEntry } from '../../src/storage/request-log-repository.js'
import { buildApp } from '../../src/app.js'
import {
  bearer,
  createTestStorage,
  type Fixtures,
  requestPathOptions,
  seedFixtures,
  START,
  STUDENTS,
  testConfig,
} from '../helper.js'

interface Server {
  app: TypedApp
  base: string
  /** Requests the router answered. */
  routed: number
}

interface Sent {
  url: string
  method?: string
  headers?: Record<string, string>
  body?: string
}

/** A query value no entry may hold. */
const QUERY_VALUE = 'zz-query-value-7'

/** The 16 bytes of a UUID, as the log would hold one. */
const uuidBytes = (id: string) => Buffer.from(id.replaceAll('-', ''), 'hex')

describe('request log on both request paths', () => {
  const clock = new ManualClock(START)
  let storage: Storage
  let fixtures: Fixtures
  let plain: Server
  let fast: Server

  async function start(path: 'fast' | 'plain'): Promise<Server> {
    const options = { config: testConfig(), storage, clock, logger: false as const, pollChanges: false }
    const app = await buildApp(requestPathOptions(options, path))
    const server: Server = { app, base: '', routed: 0 }
    app.addHook('onResponse', (_request, _reply, done) => {
      server.routed++
      done()
    })
    server.base = await app.listen({ host: '127.0.0.1', port: 0 })
    return server
  }

  beforeAll(async () => {
    storage = await createTestStorage()
    fixtures = await seedFixtures(storage, clock.now())
    plain = await start('plain')
    fast = await start('fast')
  })
  afterAll(async () => {
    await plain?.app.close()
    await fast?.app.close()
    await storage?.close()
  })

  const logOf = (app: TypedApp) => app.services.requestLog!

  async function send(server: Server, request: Sent): Promise<{ status: number; requestId: string }> {
    const response = await fetch(server.base + request.url, {
      method: request.method ?? 'GET',
      headers: request.headers,
      body: request.body,
    })
    await response.arrayBuffer()
    return { status: response.status, requestId: response.headers.get('x-request-id')! }
  }

  /** Every entry in storage, by request id. */
  async function stored(): Promise<Map<string, PlacedEntry>> {
    await logOf(plain.app).flush()
    await logOf(fast.app).flush()
    const entries: PlacedEntry[] = []
    let before: string | undefined
    do {
      const page = await pageRequestLog(storage.db, {}, 500, before)
      entries.push(...page.entries)
      before = page.next ?? undefined
    } while (before !== undefined)
    return new Map(entries.map((entry) => [entry.requestId, entry]))
  }

  it('records the same fields from both paths, and no student id, query value, first name or key', async () => {
    const { keys } = fixtures
    const progress = (id: string) => `/api/v1/students/${id}/progress`
    // Each key's first request reads storage, which the fast path leaves to the router: one each first.
    const warmUps = [keys.readWrite, keys.catalog, keys.read, keys.write, keys.otherOrg, keys.revoked].map((key) => ({
      url: '/api/v1/tiers',
      headers: bearer(key),
    }))
    const requests: Sent[] = [
      ...warmUps,
      { url: '/api/v1/tiers', headers: bearer(keys.readWrite) },
      { url: `/api/v1/lessons?tier=builder&x=${QUERY_VALUE}`, headers: bearer(keys.readWrite) },
      { url: '/api/v1/lessons?tier=builder', headers: bearer(keys.catalog) },
      { url: progress(STUDENTS.ada), headers: bearer(keys.read) },
      { url: `${progress(STUDENTS.ada)}?since=${QUERY_VALUE}`, headers: bearer(keys.read) },
      { url: progress(STUDENTS.ada), headers: bearer(keys.catalog) },
      { url: progress(STUDENTS.nobody), headers: bearer(keys.read) },
      { url: progress(STUDENTS.cleo), headers: bearer(keys.otherOrg) },
      {
        url: `/api/v1/students/${STUDENTS.ben}/enroll`,
        method: 'POST',
        headers: { ...bearer(keys.write), 'content-type': 'application/json' },
        body: '{"tier":"builder"}',
      },
      { url: `/api/v1/${QUERY_VALUE}`, headers: bearer(keys.read) },
      // No usable key: no organisation, not logged.
      { url: '/api/v1/tiers' },
      { url: '/api/v1/tiers', headers: bearer(keys.revoked) },
    ]
    const answers: { status: number; requestId: string }[][] = [[], []]
    for (const request of requests)
      for (const [i, server] of [plain, fast].entries()) answers[i]!.push(await send(server, request))
    expect(answers[1]!.map((a) => a.status)).toEqual(answers[0]!.map((a) => a.status))
    // The fast server answered the catalog reads (and on SQLite the plain progress reads and the enroll) itself.
    expect(plain.routed).toBe(requests.length)
    expect(fast.routed).toBeLessThanOrEqual(requests.length - (storage.reader === undefined ? 3 : 6))
    expect(answers[0]!.map((a) => a.status)).toEqual([
      ...[200, 200, 200, 200, 200, 401],
      ...[200, 400, 200, 200, 400, 403, 404, 200, 200, 404, 401, 401],
    ])

    // Nothing was written while answering: the entries wait for a flush.
    expect(await storage.db.selectFrom('request_log').select('id').execute()).toEqual([])
    expect(logOf(fast.app).waiting + logOf(plain.app).waiting).toBe(2 * 15)
    const entries = await stored()
    const logged = (side: number) =>
      answers[side]!.map((a) => {
        const entry = entries.get(a.requestId)
        if (entry === undefined) return undefined
        const { at: _at, latencyMs, requestId: _id, id: _position, ...fields } = entry
        expect(latencyMs).toBeGreaterThanOrEqual(0)
        return fields
      })
    expect(logged(1)).toEqual(logged(0))
    const acme = fixtures.orgs.acme
    const warm = (own: boolean) => [own, 'GET', '/api/v1/tiers', 200, null]
    expect(logged(0).map((e) => e && [e.organisationId === acme, e.method, e.route, e.status, e.problem])).toEqual([
      ...[warm(true), warm(true), warm(true), warm(true), warm(false), undefined],
      [true, 'GET', '/api/v1/tiers', 200, null],
      [true, 'GET', '/api/v1/lessons', 400, 'invalid_request'],
      [true, 'GET', '/api/v1/lessons', 200, null],
      [true, 'GET', '/api/v1/students/:id/progress', 200, null],
      [true, 'GET', '/api/v1/students/:id/progress', 400, 'invalid_request'],
      [true, 'GET', '/api/v1/students/:id/progress', 403, 'insufficient_scope'],
      [true, 'GET', '/api/v1/students/:id/progress', 404, 'student_not_found'],
      [false, 'GET', '/api/v1/students/:id/progress', 200, null],
      [true, 'POST', '/api/v1/students/:id/enroll', 200, null],
      [true, 'GET', 'unmatched', 404, 'route_not_found'],
      undefined,
      undefined,
    ])
    expect(logged(0)[0]).toMatchObject({ keyId: fixtures.keyIds.readWrite, address: '127.0.0.1' })
    // Each entry's time is its request id's: the clock's, for both paths.
    for (const answer of answers.flat())
      if (entries.has(answer.requestId)) expect(entries.get(answer.requestId)!.at).toBe(START)

    // Nothing of a student, a query or a key anywhere in the rows, as text or as bytes.
    const rows = await storage.db.selectFrom('request_log').selectAll().execute()
    expect(rows.length).toBeGreaterThan(0)
    const forbidden = [...Object.values(STUDENTS), QUERY_VALUE, 'Ada', 'Ben', 'Cleo', ...Object.values(keys)]
    for (const row of rows)
      for (const [column, value] of Object.entries(row)) {
        const bytes = Buffer.isBuffer(value) || value instanceof Uint8Array ? Buffer.from(value) : undefined
        const text = bytes === undefined ? String(value) : bytes.toString('latin1')
        for (const word of forbidden) expect(text, column).not.toContain(word)
        for (const id of Object.values(STUDENTS))
          if (bytes !== undefined) expect(bytes.includes(uuidBytes(id)), column).toBe(false)
      }
  })

  it('finds a request by the id in its 403 problem, for its own organisation only', async () => {
    const response = await fetch(`${fast.base}/api/v1/students/${STUDENTS.ada}/progress`, {
      headers: bearer(fixtures.keys.catalog),
    })
    expect(response.status).toBe(403)
    const problem = (await response.json()) as { requestId: string; code: string }
    expect(problem.code).toBe('insufficient_scope')
    await logOf(fast.app).flush()
    const own = { partner: true as const, organisations: [fixtures.orgs.acme] }
    const found = await findRequest(storage.db, own, problem.requestId)
    expect(found).toMatchObject({
      requestId: problem.requestId,
      status: 403,
      problem: 'insufficient_scope',
      keyId: fixtures.keyIds.catalog,
      keyName: 'catalog',
      route: '/api/v1/students/:id/progress',
    })
    expect(found!.keyPrefix).toBe(fixtures.keys.catalog.slice(0, found!.keyPrefix!.length))
    const other = { partner: true as const, organisations: [fixtures.orgs.beta] }
    expect(await findRequest(storage.db, other, problem.requestId)).toBeUndefined()
    expect(await findRequest(storage.db, { partner: false }, problem.requestId)).toMatchObject({ status: 403 })
  })
})
