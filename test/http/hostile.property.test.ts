/**
 * Property: whatever a client sends (paths, ids, query values, headers, bodies, encodings),
 * the service never answers 5xx, every error is problem+json matching the document, and no
 * stored data changes (the disclosure log may grow: recording reads is its job).
 */
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import type { TypedApp } from '../../src/http/app-types.js'
import type { HttpRequest, HttpResponse } from '../support/http-client.js'
import { rawRequest } from '../support/raw-http.js'
import { PROBLEM_CODES } from '../../src/errors.js'
import { isTierId } from '../../src/domain/tiers.js'
import type { Storage } from '../../src/storage/connection.js'
import {
  bearer,
  buildTestApp,
  REQUEST_PATH,
  requestPathOptions,
  STUDENTS,
  testConfig,
  type TestContext,
} from '../helper.js'
import { perSuite } from '../support/built.js'

const RUNS = 2500

/** Everything a hostile request must not change; key usage times and the disclosure log excluded. */
async function snapshot(storage: Storage): Promise<string> {
  const { db } = storage
  const tables = {
    tiers: await db.selectFrom('tiers').selectAll().orderBy('id').execute(),
    lessons: await db.selectFrom('lessons').selectAll().orderBy('slug').execute(),
    organisations: await db.selectFrom('organisations').selectAll().orderBy('id').execute(),
    agreements: await db.selectFrom('agreements').selectAll().orderBy('id').execute(),
    keys: await db
      .selectFrom('api_keys')
      .select(['id', 'key_hash', 'scopes', 'expires_at', 'revoked_at', 'organisation_id'])
      .orderBy('id')
      .execute(),
    students: await db.selectFrom('students').selectAll().orderBy('id').execute(),
    links: await db
      .selectFrom('student_organisations')
      .selectAll()
      .orderBy('student_id')
      .orderBy('organisation_id')
      .execute(),
    progress: await db.selectFrom('progress').selectAll().orderBy('student_id').orderBy('lesson_slug').execute(),
    meta: await db.selectFrom('meta').selectAll().orderBy('name').execute(),
  }
  return JSON.stringify(tables)
}

const printable = (max: number) =>
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: max })
const anyText = (max: number) => fc.string({ unit: 'grapheme', maxLength: max })

const hostileSegment = fc.oneof(
  anyText(40),
  printable(40),
  fc.constantFrom(
    '..',
    '%2e%2e',
    '%2F',
    '%00',
    '%zz',
    '%C0%AE',
    '%',
    '%%',
    ';',
    '?',
    '#',
    '//',
    '~',
    '*',
    '\u0000',
    '\uffff',
    'ä',
    '😀',
    ' ',
    '+',
  ),
  fc.constantFrom(
    "' OR 1=1 --",
    '"; DROP TABLE students; --',
    '<script>alert(1)</script>',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a Log4Shell payload, sent as it is
    '${jndi:ldap://x}',
    '{{7*7}}',
  ),
  fc.string({ unit: fc.constantFrom('a', '/', '%', '2', 'F', '.', '-'), maxLength: 30 }),
  fc.integer({ min: 250, max: 2000 }).map((n) => 'x'.repeat(n)),
)

const studentId = fc.oneof(
  fc.constantFrom(...Object.values(STUDENTS)),
  fc.uuid(),
  fc.constantFrom(
    STUDENTS.ada.toUpperCase(),
    `{${STUDENTS.ada}}`,
    STUDENTS.ada.replace(/-/g, ''),
    `${STUDENTS.ada} `,
    `urn:uuid:${STUDENTS.ada}`,
  ),
  hostileSegment,
)

const path = fc.oneof(
  studentId.map((id) => `/api/v1/students/${id}/progress`),
  studentId.map((id) => `/api/v1/students/${id}/enroll`),
  hostileSegment.map((slug) => `/api/v1/lessons/${slug}`),
  fc
    .tuple(fc.constantFrom('explorer', 'builder', 'innovator', 'wizard'), hostileSegment)
    .map(([tier, rest]) => `/api/v1/lessons/${tier}/${rest}`),
  fc
    .tuple(
      fc.constantFrom('/api/v1/tiers', '/api/v1/lessons'),
      fc.array(
        fc.tuple(
          fc.oneof(fc.constantFrom('tier', 'standard'), printable(10)),
          fc.oneof(hostileSegment, fc.constantFrom('explorer', 'builder', '', '1B-AP-08', '1b-ap-08')),
        ),
        { maxLength: 4 },
      ),
    )
    .map(([base, pairs]) => `${base}?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`),
  fc
    .tuple(
      fc.constantFrom('/api/v1/students', '/api/v1/progress/changes'),
      fc.array(
        fc.tuple(
          fc.oneof(fc.constantFrom('cursor', 'limit', 'tier', 'from'), printable(10)),
          fc.oneof(
            hostileSegment,
            fc.constantFrom('1', '500', '501', '0', '-1', '1e3', 'beginning', 'now', 'builder', ''),
          ),
        ),
        { maxLength: 4 },
      ),
    )
    .map(([base, pairs]) => `${base}?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`),
  hostileSegment.map((segment) => `/api/v1/${segment}`),
  hostileSegment.map((segment) => `/${segment}`),
  fc.constantFrom(
    '/api/v2/tiers',
    '/api/v1',
    '/api/v1/',
    '/api//v1/tiers',
    '/api/v1/tiers/',
    '/API/V1/TIERS',
    '/api/v1/tiers?',
    '/api/v1/tiers#x',
    '/api/v1/../v1/tiers',
    '/api/v1/openapi.json',
    '/docs',
    '/healthz',
  ),
)

// Mostly keys that pass authentication, so the requests reach validation, scopes and storage.
const passingKey = fc.constantFrom<'catalog' | 'read' | 'write' | 'readWrite' | 'otherOrg'>(
  'catalog',
  'read',
  'write',
  'readWrite',
  'otherOrg',
)
const authorization = fc.oneof(
  fc.constant(undefined),
  passingKey,
  passingKey,
  passingKey,
  fc.constantFrom<'catalog' | 'read' | 'write' | 'readWrite' | 'expired' | 'revoked' | 'noAgreement' | 'otherOrg'>(
    'catalog',
    'read',
    'write',
    'readWrite',
    'expired',
    'revoked',
    'noAgreement',
    'otherOrg',
  ),
  printable(80).map((value) => ({ raw: value })),
  printable(60).map((value) => ({ raw: `Bearer ${value}` })),
  fc
    .constantFrom('Bearer', 'Bearer ', 'Basic Zm9vOmJhcg==', 'Bearer cur_live_', 'Token abc', 'bearer\tx')
    .map((raw) => ({ raw })),
)

const contentType = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'application/json; charset=latin1',
    'APPLICATION/JSON',
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/xml',
    'application/merge-patch+json',
    'application/octet-stream',
    '*/*',
    '',
  ),
  printable(40),
)

const body = fc.oneof(
  fc.constant(undefined),
  fc.json().map((json) => json),
  fc.jsonValue().map((value) => JSON.stringify(value)),
  anyText(200),
  fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
  fc.constantFrom(
    '{"tier":',
    '{"tier":"builder"}}',
    '{"__proto__":{"polluted":true},"tier":"explorer"}',
    '{"constructor":{"prototype":{"polluted":true}}}',
    '{"tier":"builder","tier":"innovator"}',
    '{"tier":"\\u0000"}',
    '{"tier":null}',
    '[]',
    'null',
    '1e309',
    '"builder"',
    '{"tier":"BUILDER"}',
  ),
  fc.integer({ min: 1, max: 200 }).map((depth) => '['.repeat(depth * 50) + ']'.repeat(depth * 50)),
  fc.integer({ min: 5_000, max: 50_000 }).map((n) => JSON.stringify({ tier: 'builder', pad: 'x'.repeat(n) })),
)

const extraHeaders = fc.record(
  {
    'if-none-match': fc.oneof(printable(60), fc.constantFrom('*', 'W/"x"', '"', '""')),
    'x-forwarded-for': fc.oneof(printable(40), fc.constantFrom('127.0.0.1', '::1, 10.0.0.1')),
    'content-encoding': fc.constantFrom('gzip', 'br', 'identity', 'x-unknown'),
    accept: fc.constantFrom('application/xml', 'text/html', '*/*', 'application/problem+json'),
    'x-request-id': printable(80),
    origin: fc.constantFrom('https://evil.example', 'null', 'http://localhost'),
    'access-control-request-method': fc.constantFrom('POST', 'DELETE', 'GET'),
    'content-length': fc.constantFrom('0', '5', '999999', '-1', 'abc'),
  },
  { requiredKeys: [] },
)

const request = fc.record({
  method: fc.constantFrom('GET', 'GET', 'GET', 'POST', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'),
  path,
  authorization,
  contentType,
  body,
  extraHeaders,
})

/** A request that would legitimately change a student's tier is not hostile: leave it out. */
function isLegitimateEnroll(method: string, body: unknown): boolean {
  if (method !== 'POST' || typeof body !== 'string') return false
  try {
    const parsed = JSON.parse(body) as unknown
    return typeof parsed === 'object' && parsed !== null && isTierId((parsed as { tier?: unknown }).tier)
  } catch {
    return false
  }
}

describe('hostile requests', () => {
  const t = perSuite(() =>
    buildTestApp({
      env: { RATE_LIMIT: '1000000', ORGANISATION_RATE_LIMIT: '1000000', AUTH_FAILURE_LIMIT: '1000000' },
    }),
  )
  let before: string
  beforeAll(async () => {
    before = await snapshot(t.storage)
  })

  it(`never answer 5xx, always answer problems as problem+json, and change nothing (${RUNS} requests)`, async () => {
    let sent = 0
    const statuses = new Map<number, number>()
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        fc.pre(!isLegitimateEnroll(r.method, r.body))
        const { 'content-length': length, ...extra } = r.extraHeaders as Record<string, string>
        const headers: Record<string, string> = { ...extra }
        if (typeof r.authorization === 'string') Object.assign(headers, bearer(t.fixtures.keys[r.authorization]))
        else if (r.authorization !== undefined) headers.authorization = r.authorization.raw
        if (r.contentType !== undefined) headers['content-type'] = r.contentType
        const body = r.body !== undefined && r.method !== 'GET' && r.method !== 'HEAD' ? r.body : undefined
        // Only an honest Content-Length goes out on a socket: a lie makes the server wait for bytes
        // that never come (request-limits.test.ts's case) or read the rest as another request, and
        // one that is no number is refused by Node's parser before any request exists.
        if (length !== undefined && length === String(Buffer.byteLength(body ?? ''))) headers['content-length'] = length
        const options: HttpRequest = { method: r.method, url: r.path, headers, payload: body }
        let res: HttpResponse
        try {
          res = await t.send(options)
        } catch (error) {
          // node:http refuses to send some requests (invalid URL or header bytes); those never
          // reach the server.
          if ((error as { code?: string }).code?.startsWith('ERR_')) return
          throw error
        }
        sent++
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
        expect(res.statusCode, `${r.method} ${r.path}: ${res.body}`).toBeLessThan(500)
        expect(res.headers['x-request-id']).toBeDefined()
        if (res.statusCode >= 400 && r.method !== 'HEAD') {
          const problem = t.contract.checkProblem(res)
          expect(PROBLEM_CODES).toContain(problem.code)
        }
      }),
      { numRuns: RUNS, seed: Number(process.env.FC_SEED ?? Date.now() % 2_147_483_647), endOnFailure: true },
    )
    if (process.env.HOSTILE_STATS) console.log(sent, [...statuses].sort())
    expect(sent).toBeGreaterThanOrEqual(2000)
    // The mix reaches deep: some requests are served, many are refused for many reasons.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(0)
    for (const status of [400, 401, 403, 404, 405])
      expect(statuses.get(status) ?? 0, `status ${status}`).toBeGreaterThan(0)
    expect(await snapshot(t.storage)).toBe(before)
  }, 240_000)
})

/** Ways of writing a path that a router may read as the same path (see path-disguises.test.ts). */
const disguise = fc.constantFrom<(path: string) => string>(
  (p) => p,
  (p) => p.replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16)}`),
  (p) => p.replace(/\/([a-z])/g, (_m, c: string) => `/%${c.charCodeAt(0).toString(16).toUpperCase()}`),
  (p) => p.replace(/\/(?=[^/]*$)/, '%2F'),
  (p) => p.replace('/v1/', '//v1/'),
  (p) => p.replace('/v1/', '/v1/./'),
  (p) => p.replace('/v1/', '/v1/x/../'),
  (p) => p.replace('/v1/', '/v1/%2e/'),
  (p) => `${p}/`,
  (p) => `http://x${p}`,
  (p) => `http://x${p.replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16)}`)}`,
)

const SOCKET_RUNS = 300

// Both paths within itself: a run with the fast path off (vitest's sqlite-plain) would repeat it.
describe.skipIf(REQUEST_PATH === 'plain')('hostile requests over real sockets, with and without the fast path', () => {
  let t: TestContext
  let before: string
  const servers: { name: string; app: TypedApp; base: string }[] = []
  beforeAll(async () => {
    t = await buildTestApp({
      env: { RATE_LIMIT: '1000000', ORGANISATION_RATE_LIMIT: '1000000', AUTH_FAILURE_LIMIT: '1000000' },
    })
    before = await snapshot(t.storage)
    for (const path of ['fast', 'plain'] as const) {
      const config = testConfig({
        RATE_LIMIT: '1000000',
        ORGANISATION_RATE_LIMIT: '1000000',
        AUTH_FAILURE_LIMIT: '1000000',
        REQUEST_TIMEOUT_MS: '5000',
      })
      const app = await buildApp(
        requestPathOptions({ config, storage: t.storage, clock: t.clock, logger: false }, path),
      )
      servers.push({
        name: path === 'fast' ? 'fast path' : 'router only',
        app,
        base: await app.listen({ port: 0, host: '127.0.0.1' }),
      })
    }
  })
  afterAll(async () => {
    for (const server of servers) await server.app.close()
    await t.close()
  })

  it(`disguised paths, absolute-form targets and bodies sent in slow pieces: never 5xx, problems as problem+json, nothing changed (${SOCKET_RUNS} requests a server)`, async () => {
    const statuses = new Map<number, number>()
    for (const server of servers) {
      await fc.assert(
        fc.asyncProperty(
          request,
          disguise,
          fc.integer({ min: 1, max: 4 }),
          fc.integer({ min: 0, max: 20 }),
          async (r, spell, pieces, pauseMs) => {
            fc.pre(!isLegitimateEnroll(r.method, r.body))
            // A lying Content-Length makes the server wait for bytes that never come: that case is
            // request-limits.test.ts's (cut at REQUEST_TIMEOUT_MS), too slow to sample here.
            const { 'content-length': _lie, ...extra } = r.extraHeaders as Record<string, string>
            const headers: Record<string, string> = { ...extra }
            if (typeof r.authorization === 'string') Object.assign(headers, bearer(t.fixtures.keys[r.authorization]))
            else if (r.authorization !== undefined) headers.authorization = r.authorization.raw
            if (r.contentType !== undefined) headers['content-type'] = r.contentType
            const target = spell(r.path)
            // Bytes no HTTP/1.1 request line or header may carry; a client library refuses them.
            if (
              /[\s\u0000-\u001f\u007f-\uffff]/.test(target) ||
              Object.values(headers).some((v) => /[\u0000-\u0008\u000a-\u001f\u007f-\uffff]/.test(v))
            )
              return
            const body = r.body !== undefined && r.method !== 'GET' && r.method !== 'HEAD' ? r.body : undefined
            const res = await rawRequest(server.base, target, { method: r.method, headers, body, pieces, pauseMs })
            statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
            const seen = `${server.name}: ${r.method} ${target} -> ${res.status} ${res.body.slice(0, 200)}`
            expect(res.status, seen).toBeLessThan(500)
            if (res.status >= 400 && r.method !== 'HEAD')
              expect(res.headers['content-type'], seen).toMatch(/^application\/problem\+json/)
          },
        ),
        { numRuns: SOCKET_RUNS, seed: Number(process.env.FC_SEED ?? Date.now() % 2_147_483_647), endOnFailure: true },
      )
    }
    for (const status of [200, 400, 401, 404]) expect(statuses.get(status) ?? 0, `status ${status}`).toBeGreaterThan(0)
    expect(await snapshot(t.storage)).toBe(before)
  }, 240_000)
})
