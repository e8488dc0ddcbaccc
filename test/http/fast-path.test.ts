/**
 * The fast path (http/fast-path.ts) answers hot catalog requests before Fastify. Two servers
 * on one database, one with it and one without, get the same requests in the same order over
 * real sockets: every status, header (but the request id and date) and body must be the same,
 * the access-log lines too, and the fast one must have answered most of them without Fastify.
 */
import fs from 'node:fs'
import net from 'node:net'
import { Writable } from 'node:stream'
import SQLite from 'better-sqlite3'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { readCatalogDir } from '../../src/catalog/catalog-files.js'
import { ManualClock } from '../../src/clock.js'
import { generateApiKey } from '../../src/domain/api-key.js'
import type { TypedApp } from '../../src/http/app-types.js'
import { createLimiters } from '../../src/services/limiters.js'
import { setOrganisationStatus } from '../../src/storage/access-repository.js'
import { replaceCatalog } from '../../src/storage/catalog-repository.js'
import type { Storage } from '../../src/storage/connection.js'
import {
  CATALOG_DIR,
  createTestStorage,
  type Fixtures,
  requestPathOptions,
  seedFixtures,
  START,
  STUDENTS,
  sqliteOf,
  tempDir,
  testConfig,
} from '../helper.js'
import { CASE_ITEMS, catalogWithCaseMap } from '../support/case-fixture.js'

interface Server {
  app: TypedApp
  base: string
  /** Requests Fastify answered. */
  routed: number
  logLines: Record<string, unknown>[]
}

interface Sent {
  url: string
  method?: string
  headers?: Record<string, string>
  body?: string
}

/** The fast path answers progress reads only where storage reads synchronously. */
const ON_SQLITE = process.env.TEST_DATABASE_URL === undefined

const IGNORED_HEADERS = new Set(['date', 'x-request-id', 'connection', 'keep-alive'])

async function answer(server: Server, request: Sent) {
  const response = await fetch(server.base + request.url, {
    method: request.method ?? 'GET',
    headers: request.headers,
    body: request.body,
  })
  const requestId = response.headers.get('x-request-id')
  const headers: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    if (!IGNORED_HEADERS.has(name)) headers[name] = value
  })
  const body = (await response.text()).replaceAll(requestId ?? '\u0000', '<request id>')
  return { status: response.status, headers, body, requestId }
}

describe('fast path', () => {
  const clock = new ManualClock(START)
  let storage: Storage
  let fixtures: Fixtures
  let slow: Server
  let fast: Server

  async function start(fastPath: boolean, env: Record<string, string> = {}): Promise<Server> {
    const logLines: Record<string, unknown>[] = []
    const stream = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n'))
          if (line !== '') logLines.push(JSON.parse(line) as Record<string, unknown>)
        done()
      },
    })
    const logger = pino({ level: 'info' }, stream)
    const config = testConfig({ RATE_LIMIT: '4', AUTH_FAILURE_LIMIT: '6', ...env })
    const app = await buildApp(requestPathOptions({ config, storage, clock, logger }, fastPath ? 'fast' : 'plain'))
    const server: Server = { app, base: '', routed: 0, logLines }
    app.addHook('onResponse', (_request, _reply, done) => {
      server.routed++
      done()
    })
    server.base = await app.listen({ host: '127.0.0.1', port: 0 })
    return server
  }

  beforeAll(async () => {
    // Requests refused while a test holds the lock wait a fifth of a second for it, not two.
    storage = await createTestStorage({ beginWaitMs: 200 })
    fixtures = await seedFixtures(storage, clock.now())
    slow = await start(false)
    fast = await start(true)
  })
  afterAll(async () => {
    await slow.app.close()
    await fast.app.close()
    await storage.close()
  })

  /** What a server recorded for one request: the disclosure rows under its request id. */
  const recorded = async (requestId: string | null) =>
    storage.db
      .selectFrom('disclosures')
      .select(['student_id', 'action', 'outcome', 'key_id', 'organisation_id'])
      .where('request_id', '=', requestId ?? '')
      .execute()

  /** A server's access-log lines from the `from`th on, without what differs between servers. */
  const accessLines = (server: Server, from: number) =>
    server.logLines
      .slice(from)
      .filter((line) => line.msg === 'request')
      .map(({ method, path, status, keyId }) => ({ method, path, status, keyId }))

  async function both(request: Sent) {
    const a = await answer(slow, request)
    const b = await answer(fast, request)
    expect({ request, ...b, requestId: undefined }).toEqual({ request, ...a, requestId: undefined })
    expect(b.requestId).toMatch(/^[0-9a-f-]{36}$/)
    return b
  }

  /**
   * Sends `request` (the second of its key in this window, whose limit is 4) to the fast server
   * while another process holds the write lock. Nothing can be written, by the fast path (its
   * write times out) nor by the router, which answers 503; the request counts once.
   */
  async function refusedWhileLocked(request: Sent) {
    const routedBefore = fast.routed
    const other = new SQLite(sqliteOf(storage).readConnection!.name)
    other.exec('begin immediate')
    try {
      const refused = await answer(fast, request)
      expect(refused.status).toBe(503)
      expect(refused.headers['x-ratelimit-remaining']).toBe('2')
      expect(fast.routed - routedBefore).toBe(1)
    } finally {
      other.exec('rollback')
      other.close()
    }
  }

  it('answers every catalog request exactly as the router does', async () => {
    const auth = (key: string) => ({ authorization: `Bearer ${key}` })
    const { keys } = fixtures
    const slug = 'explorer/e1-robots-follow-instructions'
    const tiers = await both({ url: '/api/v1/tiers', headers: auth(keys.catalog) })
    expect(tiers.status).toBe(200)
    const etag = tiers.headers.etag!
    const lesson = await both({ url: `/api/v1/lessons/${slug}`, headers: auth(keys.read) })
    expect(lesson.status).toBe(200)

    const requests: Sent[] = [
      // Cached keys now: the four representations, and If-None-Match in its forms.
      { url: '/api/v1/lessons', headers: auth(keys.read) },
      { url: '/api/v1/lessons?tier=builder', headers: auth(keys.read) },
      { url: `/api/v1/lessons/${slug}`, headers: { ...auth(keys.write), 'if-none-match': lesson.headers.etag! } },
      { url: '/api/v1/tiers', headers: { ...auth(keys.write), 'if-none-match': `W/${etag}` } },
      { url: '/api/v1/tiers', headers: { ...auth(keys.write), 'if-none-match': '*' } },
      { url: '/api/v1/tiers', headers: { ...auth(keys.readWrite), 'if-none-match': `"something-else", ${etag}` } },
      { url: '/api/v1/tiers', headers: { ...auth(keys.readWrite), 'if-none-match': '"something-else"' } },
      // One key past its limit of 4: the rest are 429 with Retry-After.
      ...Array.from({ length: 4 }, () => ({ url: '/api/v1/lessons?tier=explorer', headers: auth(keys.catalog) })),
      // Keys that cannot be used, and headers that carry none.
      { url: '/api/v1/tiers', headers: auth(keys.expired) },
      { url: '/api/v1/tiers', headers: auth(keys.revoked) },
      { url: '/api/v1/tiers', headers: { authorization: `bearer   ${keys.otherOrg}` } },
      { url: '/api/v1/tiers' },
      { url: '/api/v1/tiers', headers: { authorization: 'Basic dXNlcjpwYXNz' } },
      { url: '/api/v1/tiers', headers: auth(keys.read.slice(0, -1) + (keys.read.endsWith('a') ? 'b' : 'a')) },
      // Not the fast path's: the router answers these, the same on both servers.
      { url: '/api/v1/tiers', method: 'HEAD', headers: auth(keys.otherOrg) },
      { url: `/api/v1/lessons/${slug.replace('/', '%2F')}`, headers: auth(keys.otherOrg) },
      { url: '/api/v1/lessons/explorer/e404-no-such-lesson', headers: auth(keys.otherOrg) },
      { url: '/api/v1/lessons?tier=wizard', headers: auth(keys.otherOrg) },
      { url: '/api/v1/tiers/', headers: auth(keys.otherOrg) },
    ]
    for (const request of requests) await both(request)

    // Unknown keys until the address is blocked: 401s, then 429 for every request, valid key or not.
    for (let i = 0; i < 5; i++) await both({ url: '/api/v1/tiers', headers: auth(generateApiKey().key) })
    const blocked = await both({ url: '/api/v1/tiers', headers: auth(keys.readWrite) })
    expect(blocked.status).toBe(429)
    expect(JSON.parse(blocked.body).code).toBe('too_many_failed_authentications')
    clock.advance(61_000)
    expect((await both({ url: '/api/v1/tiers', headers: auth(keys.readWrite) })).status).toBe(200)

    // A suspended organisation, once both servers have seen the change.
    await setOrganisationStatus(storage.db, fixtures.orgs.beta, 'suspended')
    await slow.app.services.changes.check()
    await fast.app.services.changes.check()
    await both({ url: '/api/v1/tiers', headers: auth(keys.otherOrg) })
    const suspended = await both({ url: '/api/v1/tiers', headers: auth(keys.otherOrg) })
    expect(suspended.status).toBe(403)
  })

  it('wrote the same access-log lines', () => {
    const strip = (lines: Record<string, unknown>[]) =>
      lines
        .filter((line) => line.msg === 'request')
        .map(({ method, path, status, keyId }) => ({ method, path, status, keyId }))
    expect(strip(fast.logLines)).toEqual(strip(slow.logLines))
    expect(strip(fast.logLines).length).toBeGreaterThan(30)
    for (const line of fast.logLines.filter((l) => l.msg === 'request')) expect(line.reqId).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('answered most of them without the router', () => {
    // The fast server routed only what needs storage or is not its to answer: the first use of
    // each fixture key (7) and of each unknown key (5), the first use after the access change
    // emptied the key cache (1), and the five requests listed as the router's.
    expect(fast.routed).toBe(7 + 5 + 1 + 5)
    expect(slow.routed).toBe(fast.logLines.filter((line) => line.msg === 'request').length)
    // The other 15 it answered itself.
    expect(slow.routed - fast.routed).toBe(15)
  })

  it('answers progress reads as the router does, and records the same disclosures', async () => {
    const auth = (key: string) => ({ authorization: `Bearer ${key}` })
    const { keys } = fixtures
    const progress = (id: string) => `/api/v1/students/${id}/progress`
    async function same(request: Sent) {
      const a = await answer(slow, request)
      const b = await answer(fast, request)
      expect({ request, ...b, requestId: undefined }).toEqual({ request, ...a, requestId: undefined })
      expect(await recorded(b.requestId)).toEqual(await recorded(a.requestId))
      return { ...b, rows: await recorded(b.requestId) }
    }
    clock.advance(61_000)
    const routedBefore = fast.routed
    const logged = { fast: fast.logLines.length, slow: slow.logLines.length }
    const groups: Sent[][] = [
      [
        // Answered by the fast path: a student of the key's organisation, any case of the id; one
        // it cannot see, and one nobody has (404, recorded as not_found).
        { url: progress(STUDENTS.ada), headers: auth(keys.read) },
        { url: progress(STUDENTS.ada.toUpperCase()), headers: auth(keys.readWrite) },
        { url: progress(STUDENTS.cleo), headers: auth(keys.read) },
        { url: progress(STUDENTS.nobody), headers: auth(keys.readWrite) },
      ],
      [
        // Refusals after identification, which the router records: no scope, no agreement.
        { url: progress(STUDENTS.ada), headers: auth(keys.write) },
        { url: progress(STUDENTS.ada), headers: auth(keys.noAgreement) },
        // No key, a revoked one.
        { url: progress(STUDENTS.ada) },
        { url: progress(STUDENTS.ada), headers: auth(keys.revoked) },
      ],
      [
        // Not the fast path's: a query, another spelling of the id, HEAD, an encoded path.
        { url: `${progress(STUDENTS.ben)}?x=1`, headers: auth(keys.read) },
        { url: progress(`urn:uuid:${STUDENTS.ben}`), headers: auth(keys.read) },
        { url: progress(STUDENTS.ben), method: 'HEAD', headers: auth(keys.read) },
        { url: progress(STUDENTS.ben).replace('progress', '%70rogress'), headers: auth(keys.read) },
      ],
      // Past the key's limit of 4: 429, recorded as denied_rate_limit.
      Array.from({ length: 5 }, () => ({ url: progress(STUDENTS.dev), headers: auth(keys.readWrite) })),
    ]
    const seen: Record<string, unknown>[] = []
    for (const group of groups) {
      for (const request of group) {
        const { status, rows } = await same(request)
        seen.push({ status, outcomes: rows.map((row) => row.outcome) })
      }
      clock.advance(61_000)
    }
    expect(seen).toEqual([
      { status: 200, outcomes: ['disclosed'] },
      { status: 200, outcomes: ['disclosed'] },
      { status: 404, outcomes: ['not_found'] },
      { status: 404, outcomes: ['not_found'] },
      { status: 403, outcomes: ['denied_scope'] },
      { status: 403, outcomes: ['denied_agreement'] },
      { status: 401, outcomes: [] },
      { status: 401, outcomes: [] },
      { status: 400, outcomes: [] },
      { status: 404, outcomes: ['not_found'] },
      { status: 200, outcomes: ['disclosed'] },
      { status: 200, outcomes: ['disclosed'] },
      ...Array.from({ length: 4 }, () => ({ status: 200, outcomes: ['disclosed'] })),
      { status: 429, outcomes: ['denied_rate_limit'] },
    ])
    // On SQLite the router answered the four refusals (the key noAgreement's first use among
    // them), the four requests of the third group and the 429; the fast path the other 8.
    // PostgreSQL cannot read synchronously: the router answers every progress read.
    expect(fast.routed - routedBefore).toBe(ON_SQLITE ? 4 + 4 + 1 : seen.length)
    // The same access-log lines, whoever answered.
    expect(accessLines(fast, logged.fast)).toEqual(accessLines(slow, logged.slow))
    expect(accessLines(fast, logged.fast)).toHaveLength(seen.length)
  })

  it.runIf(ON_SQLITE)('hands a progress read to the router when storage fails, counted once', async () => {
    const auth = { authorization: `Bearer ${fixtures.keys.read}` }
    clock.advance(61_000)
    const url = `/api/v1/students/${STUDENTS.ada}/progress`
    expect((await answer(fast, { url, headers: auth })).status).toBe(200)
    await refusedWhileLocked({ url, headers: auth })
    const again = await answer(fast, { url, headers: auth })
    expect(again.status).toBe(200)
    expect(again.headers['x-ratelimit-remaining']).toBe('1')
  })

  describe('enrolls', () => {
    const auth = (key: string) => ({ authorization: `Bearer ${key}` })
    const enrollUrl = (id: string) => `/api/v1/students/${id}/enroll`
    const json = { 'content-type': 'application/json' }
    const enroll = (
      id: string,
      key: string | undefined,
      body: string,
      headers: Record<string, string> = json,
    ): Sent => ({
      url: enrollUrl(id),
      method: 'POST',
      headers: { ...(key === undefined ? {} : auth(key)), ...headers },
      body,
    })
    const tiers = () =>
      storage.db.selectFrom('students').select(['id', 'tier', 'tier_updated_at', 'updated_at']).orderBy('id').execute()

    /** Each key's first use goes through the router (a key-cache miss): make every key known to both servers. */
    async function cacheKeys() {
      const { keys } = fixtures
      for (const key of [keys.write, keys.readWrite, keys.read, keys.noAgreement, keys.revoked]) {
        for (const server of [slow, fast]) await answer(server, { url: '/api/v1/tiers', headers: auth(key) })
      }
      clock.advance(61_000)
    }

    /**
     * The request to both servers from the same stored tiers (the router's enroll would
     * otherwise leave the fast one nothing to change); whether the fast server routed it.
     */
    async function same(request: Sent) {
      const before = await tiers()
      const a = await answer(slow, request)
      const afterSlow = await tiers()
      for (const row of before) {
        await storage.db
          .updateTable('students')
          .set({ tier: row.tier, tier_updated_at: row.tier_updated_at, updated_at: row.updated_at })
          .where('id', '=', row.id)
          .execute()
      }
      const routedBefore = fast.routed
      const b = await answer(fast, request)
      expect({ request, ...b, requestId: undefined }).toEqual({ request, ...a, requestId: undefined })
      expect(await recorded(b.requestId)).toEqual(await recorded(a.requestId))
      expect(await tiers()).toEqual(afterSlow)
      const rows = await recorded(b.requestId)
      return { status: b.status, outcomes: rows.map((row) => row.outcome), routed: fast.routed > routedBefore }
    }

    it('answers plain enrolls as the router does, and leaves every other body to it, unchanged', async () => {
      await cacheKeys()
      const { keys } = fixtures
      const logged = { fast: fast.logLines.length, slow: slow.logLines.length }
      const groups: Sent[][] = [
        [
          // The plain case: a change, the same tier again, the id in capitals, a charset.
          enroll(STUDENTS.ada, keys.write, '{"tier":"builder"}'),
          enroll(STUDENTS.ben, keys.write, ' {\n "tier" : "innovator" }\n'),
          enroll(STUDENTS.ben.toUpperCase(), keys.readWrite, '{"tier":"explorer"}', {
            'content-type': 'Application/JSON; charset=UTF-8',
          }),
          // A student of another organisation, and nobody's id: 404, recorded as not_found.
          enroll(STUDENTS.cleo, keys.write, '{"tier":"builder"}'),
          enroll(STUDENTS.nobody, keys.readWrite, '{"tier":"builder"}'),
        ],
        [
          // Refused before the body is read: no write scope, no agreement, no key, a revoked key.
          enroll(STUDENTS.ada, keys.read, '{"tier":"builder"}'),
          enroll(STUDENTS.ada, keys.noAgreement, '{"tier":"builder"}'),
          enroll(STUDENTS.ada, undefined, '{"tier":"builder"}'),
          enroll(STUDENTS.ada, keys.revoked, '{"tier":"builder"}'),
        ],
        [
          // Read here, then left to the router: bodies the schema refuses or JSON that is not.
          enroll(STUDENTS.dev, keys.write, '{"tier":"wizard"}'),
          enroll(STUDENTS.dev, keys.write, '{"tier":"builder","extra":1}'),
          enroll(STUDENTS.dev, keys.write, '{"tier":'),
          enroll(STUDENTS.dev, keys.readWrite, '{"__proto__":{"tier":"builder"}}'),
        ],
        [
          enroll(STUDENTS.dev, keys.write, '[{"tier":"builder"}]'),
          // Still the plain case: JSON may spell a letter as an escape.
          enroll(STUDENTS.dev, keys.write, '{"tier":"builder"}'.replace('b', '\\u0062')),
          // Not read here at all: another media type, no body, a body longer than the fast path reads.
          enroll(STUDENTS.dev, keys.readWrite, '{"tier":"builder"}', { 'content-type': 'text/plain' }),
        ],
        [
          enroll(STUDENTS.dev, keys.write, ''),
          enroll(STUDENTS.dev, keys.write, `{"tier":"innovator"}${' '.repeat(300)}`),
          // Not the fast path's URL: a query, and an encoded path.
          { ...enroll(STUDENTS.dev, keys.readWrite, '{"tier":"builder"}'), url: `${enrollUrl(STUDENTS.dev)}?x=1` },
          {
            ...enroll(STUDENTS.dev, keys.readWrite, '{"tier":"builder"}'),
            url: enrollUrl(STUDENTS.dev).replace('enroll', '%65nroll'),
          },
        ],
        // Past the key's limit of 4: 429, recorded as denied_rate_limit.
        Array.from({ length: 5 }, (_, i) =>
          enroll(STUDENTS.dev, keys.readWrite, `{"tier":"${i % 2 ? 'builder' : 'innovator'}"}`),
        ),
      ]
      const seen: { status: number; outcomes: string[]; routed: boolean }[] = []
      for (const group of groups) {
        for (const request of group) seen.push(await same(request))
        clock.advance(61_000)
      }
      const fastOne = (status: number, outcomes: string[]) => ({ status, outcomes, routed: false })
      const routed = (status: number, outcomes: string[]) => ({ status, outcomes, routed: true })
      expect(seen).toEqual([
        ...Array.from({ length: 3 }, () => fastOne(200, ['updated'])),
        fastOne(404, ['not_found']),
        fastOne(404, ['not_found']),
        routed(403, ['denied_scope']),
        routed(403, ['denied_agreement']),
        routed(401, []),
        routed(401, []),
        routed(400, []),
        routed(400, []),
        routed(400, []),
        routed(400, []),
        routed(400, []),
        fastOne(200, ['updated']),
        routed(415, []),
        routed(400, []),
        routed(200, ['updated']),
        routed(400, []),
        // The router decodes the path: the same enroll.
        routed(200, ['updated']),
        ...Array.from({ length: 4 }, () => fastOne(200, ['updated'])),
        routed(429, ['denied_rate_limit']),
      ])
      // The same access-log lines, whoever answered.
      expect(accessLines(fast, logged.fast)).toEqual(accessLines(slow, logged.slow))
      expect(accessLines(fast, logged.fast)).toHaveLength(seen.length)
    })

    it('counts parallel enrolls against the limit once each', async () => {
      await cacheKeys()
      const requests = Array.from({ length: 8 }, (_, i) =>
        answer(fast, enroll(STUDENTS.ada, fixtures.keys.write, `{"tier":"${i % 2 ? 'builder' : 'explorer'}"}`)),
      )
      const statuses = (await Promise.all(requests)).map((r) => r.status).sort()
      expect(statuses).toEqual([200, 200, 200, 200, 429, 429, 429, 429])
    })

    /**
     * Sends `head` at once, then each of `parts` `gapMs` apart, on a socket of its own; resolves
     * to what came back, once a whole answer has (or the server closed the connection).
     */
    function sendSlowly(base: string, head: string, parts: string[], gapMs: number): Promise<string> {
      const socket = net.connect(Number(new URL(base).port), '127.0.0.1')
      let received = ''
      let timer: NodeJS.Timeout | undefined
      return new Promise((resolve) => {
        const done = () => {
          clearInterval(timer)
          socket.destroy()
          resolve(received)
        }
        socket.on('data', (chunk) => {
          received += chunk
          const end = received.indexOf('\r\n\r\n')
          const length = /content-length: (\d+)/i.exec(received)?.[1]
          if (end !== -1 && length !== undefined && received.length >= end + 4 + Number(length)) done()
        })
        // Writing after the server has closed fails; what matters is what it answered.
        socket.on('error', () => {})
        socket.once('close', done)
        socket.write(head)
        const left = [...parts]
        timer = setInterval(() => {
          const part = left.shift()
          if (part === undefined) clearInterval(timer)
          else if (!socket.destroyed) socket.write(part)
        }, gapMs)
      })
    }

    it('waits for a body sent in parts, and answers 408 to one trickled past REQUEST_TIMEOUT_MS', async () => {
      const server = await start(true, { REQUEST_TIMEOUT_MS: '1500', HEADERS_TIMEOUT_MS: '1000' })
      try {
        const key = fixtures.keys.write
        // Known to this server's key cache from now on: the enrolls are the fast path's.
        expect((await answer(server, { url: '/api/v1/tiers', headers: auth(key) })).status).toBe(200)
        const routedBefore = server.routed
        const head = (length: number) =>
          `POST ${enrollUrl(STUDENTS.ada)} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`
        const body = '{"tier":"innovator"}'
        const inParts = await sendSlowly(server.base, head(body.length), ['{"ti', 'er":"inno', 'vator"}'], 200)
        expect(inParts).toMatch(/^HTTP\/1\.1 200 /)
        expect(inParts).toContain('"tier":"innovator"')
        expect(server.routed).toBe(routedBefore)
        // A byte every 300 ms: the whole body would take 6 s.
        const started = performance.now()
        const trickled = await sendSlowly(server.base, head(body.length), [...body], 300)
        expect(trickled).toMatch(/^HTTP\/1\.1 408 [\s\S]*"code":"request_timeout"/)
        expect(performance.now() - started).toBeLessThan(5000)
        expect(server.routed).toBe(routedBefore)
      } finally {
        await server.app.close()
      }
    })

    it('survives a client that sends part of its body and goes away, and keeps serving', async () => {
      await cacheKeys()
      const { port } = new URL(fast.base)
      const before = (await storage.db
        .selectFrom('disclosures')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirst())!
      const socket = net.connect(Number(port), '127.0.0.1')
      await new Promise((resolve) => socket.once('connect', resolve))
      const closed = new Promise((resolve) => socket.once('close', resolve))
      // node:http emits 'request' once it has a request's headers, after the app's own handler.
      const received = new Promise((resolve) => fast.app.server.once('request', resolve))
      socket.write(
        `POST ${enrollUrl(STUDENTS.ada)} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${fixtures.keys.write}\r\n` +
          'Content-Type: application/json\r\nContent-Length: 18\r\n\r\n{"tier":',
      )
      // Once the server has the headers and is reading the body (its answer to the next request
      // is queued behind them on the same socket, so a request on another one is what shows it
      // is still serving).
      await received
      socket.destroy()
      await closed
      const next = await answer(fast, enroll(STUDENTS.ada, fixtures.keys.write, '{"tier":"innovator"}'))
      expect(next.status).toBe(200)
      const after = (await storage.db
        .selectFrom('disclosures')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirst())!
      // Only the second request reached a student.
      expect(Number(after.n) - Number(before.n)).toBe(1)
    })

    it.runIf(ON_SQLITE)('hands an enroll to the router with its body when storage fails, counted once', async () => {
      await cacheKeys()
      const request = enroll(STUDENTS.ada, fixtures.keys.write, '{"tier":"builder"}')
      expect((await answer(fast, request)).status).toBe(200)
      await refusedWhileLocked(request)
      // The router read the body the fast path had read: the same request, now answered.
      const again = await answer(fast, { ...request, body: '{"tier":"explorer"}' })
      expect(again.status).toBe(200)
      expect(JSON.parse(again.body).tier).toBe('explorer')
      expect(again.headers['x-ratelimit-remaining']).toBe('1')
    })
  })

  it("answers lessons by standard as the router does, and the catalog's own spellings without it", async () => {
    const folder = tempDir('curriculum-case-')
    try {
      const read = readCatalogDir(catalogWithCaseMap(CATALOG_DIR, folder))
      if (!read.ok) throw new Error(JSON.stringify(read.problems))
      await replaceCatalog(storage.db, read.catalog)
    } finally {
      fs.rmSync(folder, { recursive: true, force: true })
    }
    await slow.app.services.changes.check()
    await fast.app.services.changes.check()
    const auth = (key: string) => ({ authorization: `Bearer ${key}` })
    const { keys } = fixtures
    // Every key known to both servers first, then a new window for the requests that count.
    for (const key of [keys.read, keys.catalog, keys.write, keys.readWrite])
      for (const server of [slow, fast]) await answer(server, { url: '/api/v1/tiers', headers: auth(key) })
    clock.advance(61_000)
    const routedBefore = fast.routed
    const logged = { fast: fast.logLines.length, slow: slow.logLines.length }
    const identifier = CASE_ITEMS['1B-AP-10']!.identifier
    const first = await both({ url: '/api/v1/lessons?standard=1B-AP-10', headers: auth(keys.read) })
    expect(JSON.parse(first.body).total).toBeGreaterThan(1)
    const requests: Sent[] = [
      // The fast path's: a code and an identifier as the catalog holds them, and If-None-Match.
      { url: `/api/v1/lessons?standard=${identifier}`, headers: auth(keys.read) },
      { url: '/api/v1/lessons?standard=1B-AP-09', headers: auth(keys.read) },
      {
        url: '/api/v1/lessons?standard=1B-AP-10',
        headers: { ...auth(keys.catalog), 'if-none-match': first.headers.etag! },
      },
      // The router's: another case, a tier as well, a standard no lesson has, an escape, a bad value, twice.
      { url: `/api/v1/lessons?standard=${identifier.toUpperCase()}`, headers: auth(keys.catalog) },
      { url: '/api/v1/lessons?tier=builder&standard=1B-AP-10', headers: auth(keys.catalog) },
      { url: '/api/v1/lessons?standard=9Z-XX-99', headers: auth(keys.write) },
      { url: '/api/v1/lessons?standard=1B%2DAP-10', headers: auth(keys.write) },
      { url: '/api/v1/lessons?standard=1B/AP-10', headers: auth(keys.write) },
      { url: '/api/v1/lessons?standard=1B-AP-10&standard=1B-AP-09', headers: auth(keys.readWrite) },
    ]
    const statuses = []
    for (const request of requests) statuses.push((await both(request)).status)
    expect(statuses).toEqual([200, 200, 304, 200, 200, 200, 200, 400, 400])
    expect(fast.routed - routedBefore).toBe(6)
    expect(accessLines(fast, logged.fast)).toEqual(accessLines(slow, logged.slow))
    // The keys' windows are spent: the tests after this one start afresh.
    clock.advance(61_000)
  })

  it('says it is on where it can be', () => {
    expect(fast.app.services.fastPath.on).toBe(true)
    expect(slow.app.services.fastPath).toEqual({ on: false, why: 'FAST_PATH is off' })
  })

  it('leaves every request to the router behind a trusted proxy, where the client address comes from headers', async () => {
    const proxied = await start(true, { TRUST_PROXY: 'true' })
    try {
      expect(proxied.app.services.fastPath).toEqual({ on: false, why: expect.stringMatching(/^TRUST_PROXY is set/) })
      const headers = { authorization: `Bearer ${fixtures.keys.catalog}` }
      for (let i = 0; i < 3; i++) expect((await answer(proxied, { url: '/api/v1/tiers', headers })).status).toBe(200)
      expect(proxied.routed).toBe(3)
    } finally {
      await proxied.app.close()
    }
  })

  it('leaves every request to the router when the limits are shared, and with FAST_PATH=off', async () => {
    const limiters = await createLimiters(testConfig(), clock, pino({ level: 'silent' }))
    // Limits the fast path cannot wait for: as with REDIS_URL, whose limiters keep none in process.
    const shared = await buildApp({
      config: testConfig(),
      storage,
      clock,
      logger: false,
      limiters: { ...limiters, inProcess: undefined },
    })
    try {
      expect(shared.services.fastPath).toEqual({ on: false, why: expect.stringMatching(/shared in Redis/) })
    } finally {
      await shared.close()
    }
    const headers = { authorization: `Bearer ${fixtures.keys.catalog}` }
    const before = slow.routed
    for (let i = 0; i < 3; i++) expect((await answer(slow, { url: '/api/v1/tiers', headers })).status).toBe(200)
    expect(slow.routed - before).toBe(3)
  })
})
