/**
 * Every kind of key (and no key) against every endpoint: the whole authorization matrix.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { generateApiKey } from '../../src/domain/api-key.js'
import { listDisclosures } from '../../src/storage/disclosure-log.js'
import { bearer, buildTestApp, type Fixtures, STUDENTS } from '../helper.js'
import { perSuite } from '../support/built.js'

type KeyKind = 'none' | 'garbage' | 'unknown' | keyof Fixtures['keys']
type Endpoint =
  | 'tiers'
  | 'lessons'
  | 'lesson'
  | 'progress'
  | 'enroll'
  | 'otherProgress'
  | 'otherEnroll'
  | 'roster'
  | 'changes'
  | 'attest'

const REQUESTS: Record<Endpoint, { method: 'GET' | 'POST'; url: string; payload?: object }> = {
  tiers: { method: 'GET', url: '/api/v1/tiers' },
  lessons: { method: 'GET', url: '/api/v1/lessons?tier=explorer' },
  lesson: { method: 'GET', url: '/api/v1/lessons/explorer/e1-robots-follow-instructions' },
  progress: { method: 'GET', url: `/api/v1/students/${STUDENTS.ben}/progress` },
  enroll: { method: 'POST', url: `/api/v1/students/${STUDENTS.ben}/enroll`, payload: { tier: 'builder' } },
  otherProgress: { method: 'GET', url: `/api/v1/students/${STUDENTS.cleo}/progress` },
  otherEnroll: { method: 'POST', url: `/api/v1/students/${STUDENTS.cleo}/enroll`, payload: { tier: 'innovator' } },
  roster: { method: 'GET', url: '/api/v1/students' },
  changes: { method: 'GET', url: '/api/v1/progress/changes?from=beginning' },
  // Needs a student scope but no agreement: every fixture organisation has one in force, or none ever.
  attest: { method: 'POST', url: '/api/v1/deletion-attestations', payload: {} },
}

const CATALOG_OK = { tiers: 200, lessons: 200, lesson: 200 }
const ALL = (code: number | string) =>
  Object.fromEntries(Object.keys(REQUESTS).map((endpoint) => [endpoint, code])) as Record<Endpoint, number | string>

/** Expected status, or problem code, per key kind and endpoint. */
const MATRIX: Record<KeyKind, Record<Endpoint, number | string>> = {
  none: ALL('api_key_missing'),
  garbage: ALL('api_key_invalid'),
  unknown: ALL('api_key_invalid'),
  revoked: ALL('api_key_revoked'),
  expired: ALL('api_key_expired'),
  catalog: {
    ...CATALOG_OK,
    progress: 'insufficient_scope',
    enroll: 'insufficient_scope',
    otherProgress: 'insufficient_scope',
    otherEnroll: 'insufficient_scope',
    roster: 'insufficient_scope',
    changes: 'insufficient_scope',
    attest: 'insufficient_scope',
  },
  read: {
    ...CATALOG_OK,
    progress: 200,
    enroll: 'insufficient_scope',
    otherProgress: 'student_not_found',
    otherEnroll: 'insufficient_scope',
    roster: 200,
    changes: 200,
    attest: 'nothing_to_attest',
  },
  write: {
    ...CATALOG_OK,
    progress: 'insufficient_scope',
    enroll: 200,
    otherProgress: 'insufficient_scope',
    otherEnroll: 'student_not_found',
    roster: 'insufficient_scope',
    changes: 'insufficient_scope',
    attest: 'nothing_to_attest',
  },
  readWrite: {
    ...CATALOG_OK,
    progress: 200,
    enroll: 200,
    otherProgress: 'student_not_found',
    otherEnroll: 'student_not_found',
    roster: 200,
    changes: 200,
    attest: 'nothing_to_attest',
  },
  noAgreement: {
    ...CATALOG_OK,
    progress: 'agreement_required',
    enroll: 'agreement_required',
    otherProgress: 'agreement_required',
    otherEnroll: 'agreement_required',
    roster: 'agreement_required',
    changes: 'agreement_required',
    attest: 'nothing_to_attest',
  },
  // Beta's key: Ben is linked to Beta too, Cleo only to Beta.
  otherOrg: {
    ...CATALOG_OK,
    progress: 200,
    enroll: 200,
    otherProgress: 200,
    otherEnroll: 200,
    roster: 200,
    changes: 200,
    attest: 'nothing_to_attest',
  },
}

describe('authorization matrix', () => {
  const t = perSuite(() =>
    buildTestApp({
      env: { RATE_LIMIT: '100000', ORGANISATION_RATE_LIMIT: '100000', AUTH_FAILURE_LIMIT: '100000' },
    }),
  )
  let headersFor: (kind: KeyKind) => Record<string, string>
  beforeAll(async () => {
    headersFor = (kind) => {
      if (kind === 'none') return {}
      if (kind === 'garbage') return bearer('not-a-key')
      if (kind === 'unknown') return bearer(generateApiKey().key)
      return bearer(t.fixtures.keys[kind])
    }
  })

  for (const [kind, row] of Object.entries(MATRIX) as [KeyKind, Record<Endpoint, number | string>][]) {
    for (const [endpoint, expected] of Object.entries(row) as [Endpoint, number | string][]) {
      it(`${kind} key, ${endpoint}: ${expected}`, async () => {
        const request = REQUESTS[endpoint]
        const res = await t.call({
          method: request.method,
          url: request.url,
          headers: headersFor(kind),
          ...(request.payload ? { payload: request.payload } : {}),
        })
        if (typeof expected === 'number') {
          expect(res.statusCode, res.body).toBe(expected)
          return
        }
        const body = res.json()
        expect(body.code, res.body).toBe(expected)
        const challenge = String(res.headers['www-authenticate'] ?? '')
        if (body.status === 401) {
          expect(challenge).toMatch(/^Bearer realm="curriculum-api"/)
          expect(challenge.includes('error="invalid_token"')).toBe(expected !== 'api_key_missing')
          expect(res.headers.ratelimit).toBeUndefined()
        } else {
          expect(res.headers.ratelimit).toBeDefined()
        }
        if (expected === 'insufficient_scope') {
          // Attesting takes either student scope; its challenge names the usual one.
          const scope = request.method === 'GET' || endpoint === 'attest' ? 'students:read' : 'students:write'
          expect(challenge).toBe(`Bearer realm="curriculum-api", error="insufficient_scope", scope="${scope}"`)
          expect(body.detail).toContain(scope)
        }
      })
    }
  }

  it('takes the scheme in any case and refuses other schemes and keys in the URL', async () => {
    const key = t.fixtures.keys.catalog
    for (const authorization of [`bearer ${key}`, `BEARER ${key}`, `Bearer  ${key}`]) {
      expect((await t.call({ url: '/api/v1/tiers', headers: { authorization } })).statusCode, authorization).toBe(200)
    }
    const basic = await t.call({
      url: '/api/v1/tiers',
      headers: { authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}` },
    })
    expect(basic.json().code).toBe('api_key_missing')
    for (const query of [`access_token=${key}`, `api_key=${key}`, `key=${key}`]) {
      const res = await t.call({ url: `/api/v1/tiers?${query}` })
      expect(res.statusCode).toBe(401)
      expect(res.json().detail).toContain('never accepted in the URL')
    }
    const truncated = await t.call({ url: '/api/v1/tiers', headers: bearer(key.slice(0, -1)) })
    expect(truncated.json().code).toBe('api_key_invalid')
    const empty = await t.call({ url: '/api/v1/tiers', headers: { authorization: 'Bearer ' } })
    expect(empty.json().code).toBe('api_key_invalid')
  })

  it('writes refusals of student data to the disclosure log', async () => {
    await t.call({ url: `/api/v1/students/${STUDENTS.dev}/progress`, headers: bearer(t.fixtures.keys.catalog) })
    await t.call({ url: `/api/v1/students/${STUDENTS.dev}/progress`, headers: bearer(t.fixtures.keys.noAgreement) })
    const denied = await listDisclosures(t.storage.db, { studentId: STUDENTS.dev, action: 'progress.read' })
    expect(denied.map((row) => row.outcome).sort()).toEqual(['denied_agreement', 'denied_scope'])
  })

  it('refuses student data once the agreement has expired, without a restart', async () => {
    const key = bearer(t.fixtures.keys.readWrite)
    expect((await t.call({ url: REQUESTS.progress.url, headers: key })).statusCode).toBe(200)
    t.clock.advance(400 * 24 * 3_600_000)
    const res = await t.call({ url: REQUESTS.progress.url, headers: key })
    expect(res.json().code).toBe('agreement_required')
    // The catalog stays open to the key.
    expect((await t.call({ url: '/api/v1/tiers', headers: key })).statusCode).toBe(200)
  })
})
