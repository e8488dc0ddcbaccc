/**
 * What a partner reads about change: the changelog and the versioning policy served by /docs, the
 * release they name agreeing with the OpenAPI document and package.json, every problem `type`
 * landing on a section of /docs/errors with a cause and a fix, the Postman collection that the
 * build generates from the document, and a deprecated operation as the document, /docs and its
 * answers show it on both request paths.
 */
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { PROBLEM_CODES, problemType } from '../../src/errors.js'
import { API_VERSION } from '../../src/http/api-version.js'
import { rollKey } from '../../src/cases/api-keys.js'
import { deprecation } from '../../src/domain/deprecation.js'
import { findApiKey } from '../../src/storage/access-repository.js'
import { bearer, buildTestApp, REQUEST_PATH, STUDENTS } from '../helper.js'
import { perSuite } from '../support/built.js'

const ROOT = path.resolve(import.meta.dirname, '../..')
const CHANGELOG = fs.readFileSync(path.join(ROOT, 'CHANGELOG.md'), 'utf8')

/** The text of an HTML fragment: tags out, white space as single spaces. */
function textOf(html: string): string {
  return html
    .replace(/<[^>]+>/g, '')
    .replace(/\s+/g, ' ')
    .trim()
}

function expectDocsPage(response: { statusCode: number; headers: Record<string, unknown>; body: string }): void {
  expect(response.statusCode).toBe(200)
  expect(response.headers['content-type']).toMatch(/^text\/html/)
  expect(response.headers['content-security-policy']).toContain("default-src 'none'")
  expect(response.body).toContain('<link rel="stylesheet" href="/docs/style.css">')
  expect(response.body).not.toMatch(/<script/)
}

interface PostmanItem {
  name: string
  request: {
    method: string
    url: { getPath(unresolved: boolean): string; variables: { toObject(): Record<string, string> } }
    auth?: { type: string; parameters(): { toObject(): Record<string, string> } }
    body?: { raw?: string }
  }
}
interface PostmanCollection {
  forEachItem(callback: (item: PostmanItem) => void): void
  variables: { toObject(): Record<string, string> }
  auth?: { type: string; parameters(): { toObject(): Record<string, string> } }
}
/** Postman's own reader of collections (postman-collection, CommonJS without declared types). */
const postman = createRequire(import.meta.url)('postman-collection') as {
  Collection: new (definition: unknown) => PostmanCollection
}

const COLLECTION = '/docs/curriculum-api.postman_collection.json'

describe('/docs on change', () => {
  const t = perSuite(() => buildTestApp())

  describe('the changelog and the versioning policy', () => {
    it('names one release everywhere: the changelog, info.version and package.json', async () => {
      const releases = [...CHANGELOG.matchAll(/^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$/gm)]
      expect(releases.length).toBeGreaterThan(1)
      expect(releases[0]![1]).toBe(API_VERSION)
      const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }
      expect(pkg.version).toBe(API_VERSION)
      const document = (await t.call({ url: '/api/v1/openapi.json' })).json()
      expect(document.info.version).toBe(API_VERSION)
      expect((await t.call({ url: '/docs' })).body).toContain(`<small>v${API_VERSION}</small>`)
    })

    it('keeps the changelog in Keep a Changelog form: Unreleased first, releases newest first', () => {
      const headings = [...CHANGELOG.matchAll(/^(#{1,3}) (.*)$/gm)].map((m) => [m[1]!.length, m[2]!] as const)
      expect(headings[0]).toEqual([1, 'Changelog'])
      expect(headings[1]).toEqual([2, '[Unreleased]'])
      const releases = headings.filter(([level]) => level === 2).slice(1)
      const numbered = releases.map(([, text]) => /^\[(\d+)\.(\d+)\.(\d+)\] - (\d{4}-\d{2}-\d{2})$/.exec(text))
      expect(
        numbered.every((m) => m !== null),
        JSON.stringify(releases),
      ).toBe(true)
      for (let i = 1; i < numbered.length; i++) {
        const [newer, older] = [numbered[i - 1]!, numbered[i]!]
        const order = (m: RegExpExecArray) => Number(m[1]) * 1e6 + Number(m[2]) * 1e3 + Number(m[3])
        expect(order(newer)).toBeGreaterThan(order(older))
        expect(newer[4]! >= older[4]!).toBe(true)
      }
      const kinds = new Set(headings.filter(([level]) => level === 3).map(([, text]) => text))
      for (const kind of kinds)
        expect(['Added', 'Changed', 'Deprecated', 'Removed', 'Fixed', 'Security']).toContain(kind)
    })

    it('serves both files as pages of /docs, rendered from the files, and links them from /docs', async () => {
      const changelog = await t.call({ url: '/docs/changelog' })
      expectDocsPage(changelog)
      expect(changelog.body).toContain('<h2 id="unreleased">[Unreleased]</h2>')
      expect(changelog.body).toContain(`<h2 id="${API_VERSION.replaceAll('.', '')}---`)
      // A link between the two files becomes a link between the two pages.
      expect(changelog.body).toContain('<a href="/docs/versioning">versioning policy</a>')
      const versioning = await t.call({ url: '/docs/versioning' })
      expectDocsPage(versioning)
      expect(versioning.body).toContain('<h2 id="what-may-change-within-v1-without-notice">')
      expect(versioning.body).toContain('<a href="/docs/changelog">the changelog</a>')
      expect(versioning.body).toContain('<pre><code>Deprecation: @1798761600')
      const reference = (await t.call({ url: '/docs' })).body
      for (const url of ['/docs/changelog', '/docs/versioning', '/docs/curriculum-api.postman_collection.json'])
        expect(reference).toContain(`href="${url}"`)
    })
  })

  describe('the error catalogue', () => {
    it("gives every code's `type` a section of its own, with a cause and a fix", async () => {
      const pages = new Map<string, string>()
      for (const code of PROBLEM_CODES) {
        const [page = '', anchor] = problemType(code).split('#')
        if (!pages.has(page)) {
          const response = await t.call({ url: page })
          expectDocsPage(response)
          pages.set(page, response.body)
        }
        const html = pages.get(page)!
        expect(html.match(new RegExp(`id="${anchor}"`, 'g')), `one element has the id ${anchor}`).toHaveLength(1)
        const section = new RegExp(`<section class="problem" id="${anchor}"[^>]*>([\\s\\S]*?)</section>`).exec(
          html,
        )?.[1]
        expect(section, code).toBeDefined()
        const cause = textOf(/<p class="cause">([\s\S]*?)<\/p>/.exec(section!)?.[1] ?? '')
        const fix = textOf(/<p class="fix">([\s\S]*?)<\/p>/.exec(section!)?.[1] ?? '')
        expect(cause.length, `${code} cause`).toBeGreaterThan(40)
        expect(fix.length, `${code} fix`).toBeGreaterThan(40)
      }
    })

    it('reaches a section from a real problem: its type, then its anchor', async () => {
      const problem = (await t.call({ url: '/api/v1/tiers', headers: bearer(`cur_test_${'x'.repeat(38)}`) })).json()
      expect(problem.type).toBe('/docs/errors#api_key_invalid')
      const html = (await t.call({ url: '/docs/errors' })).body
      const section = /<section class="problem" id="api_key_invalid"[^>]*>([\s\S]*?)<\/section>/.exec(html)?.[1]
      expect(textOf(/<p class="fix">([\s\S]*?)<\/p>/.exec(section ?? '')?.[1] ?? '')).toMatch(/create a new key/)
    })
  })

  describe('the Postman collection', () => {
    it('holds every operation of the document with its method and path, keyed by baseUrl, apiKey and studentId', async () => {
      const response = await t.call({ url: COLLECTION })
      expect(response.statusCode).toBe(200)
      expect(response.headers['content-type']).toMatch(/^application\/json/)
      expect(response.headers['content-disposition']).toBe(
        'attachment; filename="curriculum-api.postman_collection.json"',
      )
      const definition = response.json()
      expect(definition.info.schema).toBe('https://schema.getpostman.com/json/collection/v2.1.0/collection.json')
      expect(response.body).not.toContain('bearerToken')
      const document = (await t.call({ url: '/api/v1/openapi.json' })).json()
      const collection = new postman.Collection(definition)
      expect(collection.variables.toObject()).toEqual({
        baseUrl: document.servers[0].url,
        apiKey: '',
        studentId: '',
      })
      expect(collection.auth?.type).toBe('bearer')
      expect(collection.auth?.parameters().toObject()).toMatchObject({ token: '{{apiKey}}' })

      const requests = new Map<string, PostmanItem['request']>()
      collection.forEachItem((item) => {
        requests.set(`${item.request.method} ${item.request.url.getPath(true)}`, item.request)
      })
      const operations = Object.entries(document.paths as Record<string, Record<string, { security?: unknown[] }>>)
        .flatMap(([p, item]) => Object.entries(item).map(([method, operation]) => ({ method, p, operation })))
        .map(({ method, p, operation }) => ({
          key: `${method.toUpperCase()} ${p.replace(/\{(\w+)\}/g, ':$1')}`,
          keyless: operation.security?.length === 0,
        }))
      expect([...requests.keys()].sort()).toEqual(operations.map((o) => o.key).sort())
      for (const { key, keyless } of operations) {
        const request = requests.get(key)!
        // No auth of its own: the collection's bearer token.
        if (keyless) expect(request.auth?.type, key).toBe('noauth')
        else if (request.auth !== undefined) expect(request.auth.parameters().toObject().token, key).toBe('{{apiKey}}')
      }
      const progress = requests.get('GET /api/v1/students/:id/progress')!
      expect(definition.item.flatMap((folder: { item: unknown[] }) => folder.item)).toContainEqual(
        expect.objectContaining({
          request: expect.objectContaining({
            url: expect.objectContaining({ host: ['{{baseUrl}}'], path: ['api', 'v1', 'students', ':id', 'progress'] }),
          }),
        }),
      )
      expect(progress.url.variables.toObject()).toEqual({ id: '{{studentId}}' })
      expect(JSON.parse(requests.get('POST /api/v1/students/:id/enroll')!.body?.raw ?? '')).toEqual({ tier: 'builder' })
    })

    it('answers as imported once its variables are set', async () => {
      const collection = new postman.Collection((await t.call({ url: COLLECTION })).json())
      // What Postman does: the collection's variables, then the path's (which name the collection's).
      const variables: Record<string, string> = {
        baseUrl: t.base,
        apiKey: t.fixtures.keys.read,
        studentId: STUDENTS.ben,
      }
      const resolve = (text: string) => text.replace(/\{\{(\w+)\}\}/g, (_match, name: string) => variables[name] ?? '')
      const statuses: Record<string, number> = {}
      const calls: Promise<void>[] = []
      collection.forEachItem((item) => {
        const { method, url } = item.request
        const template = url.getPath(true)
        if (method !== 'GET' || !['/api/v1/students/:id/progress', '/api/v1/tiers'].includes(template)) return
        const pathVariables = url.variables.toObject()
        const target = template.replace(/:(\w+)/g, (_match, name: string) => resolve(pathVariables[name] ?? ''))
        const headers = { authorization: `Bearer ${resolve(collection.auth!.parameters().toObject().token!)}` }
        calls.push(t.call({ url: target, headers }).then((response) => void (statuses[template] = response.statusCode)))
      })
      await Promise.all(calls)
      expect(statuses).toEqual({ '/api/v1/students/:id/progress': 200, '/api/v1/tiers': 200 })
    })
  })
})

describe('a deprecated operation', () => {
  const tiers = deprecation({ deprecatedAt: '2027-01-01', sunsetAt: '2027-07-02' })
  const t = perSuite(() =>
    buildTestApp({
      deprecations: {
        'GET /api/v1/tiers': tiers,
        'GET /api/v1/students/:id/progress': tiers,
        'GET /api/v1/students': tiers,
        // Long past: a sunset sooner than any key's end.
        'GET /api/v1/lessons/*': deprecation({ deprecatedAt: '2025-01-06', sunsetAt: '2025-07-07' }),
      },
    }),
  )
  const expected = {
    deprecation: '@1798761600',
    sunset: 'Fri, 02 Jul 2027 00:00:00 GMT',
    link: '</docs/changelog>; rel="deprecation"; type="text/html"',
  }

  it(`carries Deprecation, Sunset and Link on every answer, on the ${REQUEST_PATH} request path`, async () => {
    const routedBefore = t.routed
    const answers = [
      await t.call({ url: '/api/v1/tiers', headers: bearer(t.fixtures.keys.catalog) }),
      await t.call({ url: '/api/v1/tiers', method: 'HEAD', headers: bearer(t.fixtures.keys.catalog) }),
      await t.call({ url: '/api/v1/tiers' }),
      await t.call({ url: `/api/v1/students/${STUDENTS.ben}/progress`, headers: bearer(t.fixtures.keys.read) }),
    ]
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 401, 200])
    for (const answer of answers) expect(answer.headers).toMatchObject(expected)
    // The fast path leaves a deprecated operation to the router, which adds the headers.
    expect(t.routed - routedBefore).toBe(answers.length)
    // Browsers may read them.
    const exposed = String(answers[0]!.headers['access-control-expose-headers']).split(', ')
    expect(exposed).toEqual(expect.arrayContaining(['Deprecation', 'Sunset', 'Link']))
  })

  it("keeps another Link beside its own (the roster's next page)", async () => {
    const page = await t.call({ url: '/api/v1/students?limit=1', headers: bearer(t.fixtures.keys.read) })
    expect(page.statusCode).toBe(200)
    expect(page.headers.link).toMatch(
      /^<[^>]+>; rel="next", <\/docs\/changelog>; rel="deprecation"; type="text\/html"$/,
    )
  })

  it('leaves the other operations alone', async () => {
    const lessons = await t.call({ url: '/api/v1/lessons', headers: bearer(t.fixtures.keys.catalog) })
    expect(lessons.statusCode).toBe(200)
    expect(lessons.headers.deprecation).toBeUndefined()
    expect(lessons.headers.sunset).toBeUndefined()
  })

  it('is marked in the OpenAPI document, with its dates and headers, and in /docs', async () => {
    const document = (await t.call({ url: '/api/v1/openapi.json' })).json()
    const operation = document.paths['/api/v1/tiers'].get
    expect(operation.deprecated).toBe(true)
    expect(operation['x-deprecation']).toEqual({ deprecatedAt: '2027-01-01', sunsetAt: '2027-07-02' })
    expect(operation.description).toMatch(/^\*\*Deprecated\*\* on 2027-01-01; it may be removed after 2027-07-02/)
    for (const status of ['200', '304', '401'])
      expect(Object.keys(operation.responses[status].headers)).toEqual(
        expect.arrayContaining(['Deprecation', 'Sunset', 'Link']),
      )
    expect(document.paths['/api/v1/lessons'].get.deprecated).toBeUndefined()
    const reference = (await t.call({ url: '/docs' })).body
    expect(reference).toMatch(
      /<code>\/api\/v1\/tiers<\/code> <strong class="deprecated">Deprecated<\/strong><\/h3>[\s\S]*?<strong>Deprecated<\/strong> on 2027-01-01/,
    )
    expect(reference).not.toMatch(/<code>\/api\/v1\/lessons<\/code> <strong class="deprecated">/)
  })

  // Last: it rolls a key of the app's fixtures.
  it("gives a rolled key's answers the sooner of the two ends", async () => {
    const key = (await findApiKey(t.storage.db, t.fixtures.keyIds.write))!
    const end = t.clock.now() + 3_600_000
    await rollKey(t.storage.db, { key, end }, t.clock.now())
    await t.app.services.changes.check()
    const rolled = bearer(t.fixtures.keys.write)
    const tiersAnswer = await t.call({ url: '/api/v1/tiers', headers: rolled })
    expect(tiersAnswer.headers.sunset).toBe(new Date(end).toUTCString())
    expect(tiersAnswer.headers.deprecation).toBe(`@${Math.floor(t.clock.now() / 1000)}`)
    const lesson = await t.call({ url: '/api/v1/lessons/explorer/e1-robots-follow-instructions', headers: rolled })
    expect(lesson.statusCode).toBe(200)
    expect(lesson.headers).toMatchObject({ deprecation: '@1736121600', sunset: 'Mon, 07 Jul 2025 00:00:00 GMT' })
  })
})
