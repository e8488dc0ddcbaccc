/**
 * The OpenAPI document: complete, lint-clean, and usable by a partner's own tooling.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import openapiTS, { astToString } from 'openapi-typescript'
import { beforeAll, describe, expect, it } from 'vitest'
import { WEBHOOK_SCHEMA_IDS } from '../../src/domain/webhook-payloads.js'
import { PROBLEM_CATALOG, PROBLEM_CODES } from '../../src/errors.js'
import { buildTestApp, REQUEST_PATH, STUDENTS, tempDir } from '../helper.js'
import { perSuite } from '../support/built.js'

const ROOT = path.resolve(import.meta.dirname, '../..')

describe('OpenAPI document', () => {
  const t = perSuite(() => buildTestApp({ env: { RATE_LIMIT: '100000', ORGANISATION_RATE_LIMIT: '100000' } }))
  // biome-ignore lint/suspicious/noExplicitAny: the served document is read as loose JSON, field by field
  let doc: Record<string, any>
  beforeAll(async () => {
    const res = await t.call({ url: '/api/v1/openapi.json' })
    expect(res.statusCode).toBe(200)
    doc = res.json()
  })

  it('is OpenAPI 3.1 and describes exactly the contract endpoints and the v1 additions', () => {
    expect(doc.openapi).toBe('3.1.0')
    const operations = Object.entries(doc.paths).flatMap(([p, item]) =>
      Object.keys(item as object).map((m) => `${m.toUpperCase()} ${p}`),
    )
    expect(operations.sort()).toEqual(
      [
        'GET /api/v1/tiers',
        'GET /api/v1/lessons',
        'GET /api/v1/lessons/{slug}',
        'GET /api/v1/students/{id}/progress',
        'POST /api/v1/students/{id}/enroll',
        'GET /api/v1/students',
        'GET /api/v1/progress/changes',
        'POST /api/v1/deletion-attestations',
        'GET /.well-known/curriculum-signing-keys',
        'GET /healthz',
        'GET /livez',
        'GET /readyz',
      ].sort(),
    )
  })

  it('declares every status each route can return, with the problem schema', () => {
    const expected: Record<string, string[]> = {
      'get /api/v1/tiers': ['200', '304', '400', '401', '403', '429', '500'],
      'get /api/v1/lessons': ['200', '304', '400', '401', '403', '429', '500'],
      'get /api/v1/lessons/{slug}': ['200', '304', '400', '401', '403', '404', '429', '500'],
      'get /api/v1/students/{id}/progress': ['200', '400', '401', '403', '404', '429', '500', '503'],
      'post /api/v1/students/{id}/enroll': ['200', '400', '401', '403', '404', '413', '415', '429', '500', '503'],
      'get /api/v1/students': ['200', '400', '401', '403', '429', '500', '503'],
      'get /api/v1/progress/changes': ['200', '400', '401', '403', '410', '429', '500', '503'],
      'post /api/v1/deletion-attestations': [
        '201',
        '400',
        '401',
        '403',
        '404',
        '409',
        '413',
        '415',
        '429',
        '500',
        '503',
      ],
      'get /.well-known/curriculum-signing-keys': ['200', '503'],
      'get /readyz': ['200', '503'],
    }
    for (const [key, statuses] of Object.entries(expected)) {
      const [method, p] = key.split(' ') as [string, string]
      const responses = doc.paths[p][method].responses
      expect(Object.keys(responses).sort(), key).toEqual(statuses.sort())
      for (const status of statuses.filter((s) => Number(s) >= 400)) {
        expect(responses[status].content['application/problem+json'].schema.$ref).toBe('#/components/schemas/Problem')
      }
    }
    expect(doc.components.schemas.Problem.properties.code.enum).toEqual(PROBLEM_CODES)
  })

  // The document is the same whichever path answers: linted and type-checked on the fast path's run only.
  it.skipIf(REQUEST_PATH === 'plain')('passes Redocly lint (recommended rules) with no error', () => {
    const file = path.join(tempDir(), 'openapi.json')
    fs.writeFileSync(file, JSON.stringify(doc, null, 2))
    const result = spawnSync(path.join(ROOT, 'node_modules/.bin/redocly'), ['lint', file, '--format=json'], {
      encoding: 'utf8',
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      timeout: 120_000,
    })
    const report = JSON.parse(result.stdout)
    const errors = report.problems.filter((problem: { severity: string }) => problem.severity === 'error')
    expect(errors, JSON.stringify(errors, null, 2)).toEqual([])
    // Nor any warning about the webhooks section or the event bodies it names.
    const webhookParts = ['#/webhooks', ...Object.values(WEBHOOK_SCHEMA_IDS).map((id) => `#/components/schemas/${id}`)]
    const aboutWebhooks = report.problems.filter((problem: { location: { pointer: string }[] }) =>
      problem.location.some(({ pointer }) => webhookParts.some((part) => pointer.startsWith(part))),
    )
    expect(aboutWebhooks, JSON.stringify(aboutWebhooks, null, 2)).toEqual([])
    expect(result.status).toBe(0)
  })

  it.skipIf(REQUEST_PATH === 'plain')('generates a typed client that type-checks', async () => {
    const generated = path.join(ROOT, 'test/client/generated')
    fs.mkdirSync(generated, { recursive: true })
    // Written aside, then renamed over: the PostgreSQL project may be type-checking the same file
    // at this moment, and a rename never shows it half written.
    const aside = path.join(generated, `api.ts.${process.pid}`)
    fs.writeFileSync(aside, astToString(await openapiTS(doc as never)))
    fs.renameSync(aside, path.join(generated, 'api.ts'))
    const typecheck = spawnSync(
      path.join(ROOT, 'node_modules/.bin/tsc'),
      ['-p', path.join(ROOT, 'test/client/tsconfig.json')],
      { encoding: 'utf8' },
    )
    expect(typecheck.stdout + typecheck.stderr).toBe('')
    expect(typecheck.status).toBe(0)
  })

  it('calls every endpoint with the typed client', async () => {
    // Imported by a computed path: the fixture compiles only once its types are generated, so
    // the project's own type-check must not follow this import (it has its own tsconfig). Its
    // imports of the generated file are of types only, gone once it runs.
    const fixture = '../client/partner-client.js'
    const { runPartnerClient } = (await import(fixture)) as {
      runPartnerClient: (
        baseUrl: string,
        catalogKey: string,
        studentKey: string,
        studentId: string,
      ) => Promise<Record<string, unknown>>
    }
    const run = await runPartnerClient(t.base, t.fixtures.keys.catalog, t.fixtures.keys.readWrite, STUDENTS.ben)
    expect(run).toEqual({
      tierIds: ['explorer', 'builder', 'innovator'],
      lessonTotal: expect.any(Number),
      builderTotal: 10,
      lessonTitle: 'Robots Follow Instructions',
      standards: { csta: ['1A-AP-08', '1A-AP-11'] },
      // The sample catalog has no CASE maps: codes without identifiers.
      alignment: [
        { framework: 'csta', code: '1A-AP-08' },
        { framework: 'csta', code: '1A-AP-11' },
      ],
      alignedLessons: ['explorer/e1-robots-follow-instructions'],
      notModified: true,
      displayName: 'Ben',
      completedLessons: 1,
      enrolledTier: 'innovator',
      updatedAt: new Date(t.clock.now()).toISOString(),
      missingLessonCode: 'lesson_not_found',
      roster: [STUDENTS.ada, STUDENTS.ben, STUDENTS.dev],
      rosterPages: 2,
      changesAfterEnroll: [{ type: 'tier_changed', profileId: STUDENTS.ben, tier: 'innovator' }],
      changesFromBeginning: 8,
      attestationCode: 'nothing_to_attest',
      signingKeyIds: [expect.stringMatching(/^[\w-]{43}$/)],
    })
  })

  it('documents every problem code in the API guide', () => {
    const guide = fs.readFileSync(path.join(ROOT, 'docs', 'api.md'), 'utf8')
    for (const code of PROBLEM_CODES) {
      expect(guide, code).toMatch(new RegExp(`\\|\\s*\`${code}\`\\s*\\|\\s*${PROBLEM_CATALOG[code].status}\\s*\\|`))
    }
  })
})
