/**
 * Lessons carry each standard's CASE identifier where the catalog's maps have one, beside
 * `standards` as it always was, and `GET /api/v1/lessons?standard=` finds lessons by a code or an
 * identifier. Over a real socket, on this run's request path (fast or router alone) and engine.
 */
import fs from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CatalogData, readCatalogDir } from '../../src/catalog/catalog-files.js'
import { replaceCatalog } from '../../src/storage/catalog-repository.js'
import { bearer, buildTestApp, CATALOG_DIR, REQUEST_PATH, tempDir } from '../helper.js'
import { perSuite } from '../support/built.js'
import { CASE_ITEMS, catalogWithCaseMap } from '../support/case-fixture.js'

const folder = tempDir('curriculum-case-')
afterAll(() => fs.rmSync(folder, { recursive: true, force: true }))

function alignedCatalog(): CatalogData {
  const read = readCatalogDir(catalogWithCaseMap(CATALOG_DIR, folder))
  if (!read.ok) throw new Error(JSON.stringify(read.problems))
  return read.catalog
}

describe('standards and their CASE identifiers', () => {
  const t = perSuite(() => buildTestApp({ env: { RATE_LIMIT: '100000', ORGANISATION_RATE_LIMIT: '100000' } }))
  let auth: { authorization: string }
  let catalog: CatalogData
  const get = (url: string, headers: Record<string, string> = {}) => t.call({ url, headers: { ...auth, ...headers } })
  /** The slugs of the catalog's lessons that name `code`, in catalog order. */
  const naming = (code: string, tier?: string) =>
    catalog.lessons
      .filter((lesson) => Object.values(lesson.standards).some((codes) => codes.includes(code)))
      .filter((lesson) => tier === undefined || lesson.tier === tier)
      .map((lesson) => lesson.slug)
  const slugsOf = (body: { lessons: { slug: string }[]; total: number }) => {
    expect(body.total).toBe(body.lessons.length)
    return body.lessons.map((lesson) => lesson.slug)
  }

  beforeAll(async () => {
    auth = bearer(t.fixtures.keys.catalog)
    catalog = alignedCatalog()
    await replaceCatalog(t.storage.db, catalog)
    await t.app.services.changes.check()
  })

  it('keeps `standards` as it was and adds every code, with its identifier and URI where the map has one', async () => {
    const res = await get('/api/v1/lessons/builder/b1-what-is-an-algorithm')
    expect(res.statusCode).toBe(200)
    const lesson = res.json()
    expect(Object.keys(lesson)).toEqual([
      'slug',
      'lessonId',
      'tier',
      'title',
      'slideCount',
      'contentTypes',
      'standards',
      'standardsAlignment',
    ])
    expect(lesson.standards).toEqual({ csta: ['1B-AP-08', '1B-AP-11'] })
    expect(lesson.standardsAlignment).toEqual([
      {
        framework: 'csta',
        code: '1B-AP-08',
        caseIdentifier: CASE_ITEMS['1B-AP-08']!.identifier,
        caseUri: CASE_ITEMS['1B-AP-08']!.uri,
      },
      {
        framework: 'csta',
        code: '1B-AP-11',
        caseIdentifier: CASE_ITEMS['1B-AP-11']!.identifier,
        caseUri: CASE_ITEMS['1B-AP-11']!.uri,
      },
    ])
    // A code the map lacks has no identifier, and a lesson without standards an empty list.
    const [nine] = naming('1B-AP-09')
    expect((await get(`/api/v1/lessons/${nine}`)).json().standardsAlignment).toEqual([
      { framework: 'csta', code: '1B-AP-09' },
    ])
    expect((await get('/api/v1/lessons/builder/b7-binary-numbers')).json()).toMatchObject({
      standards: {},
      standardsAlignment: [],
    })
  })

  it('finds the lessons of a code, and the same by its CASE identifier in either case', async () => {
    const byCode = await get('/api/v1/lessons?standard=1B-AP-10')
    expect(byCode.statusCode).toBe(200)
    expect(slugsOf(byCode.json())).toEqual(naming('1B-AP-10'))
    expect(naming('1B-AP-10').length).toBeGreaterThan(1)
    const identifier = CASE_ITEMS['1B-AP-10']!.identifier
    for (const spelling of [identifier, identifier.toUpperCase()]) {
      const byIdentifier = await get(`/api/v1/lessons?standard=${spelling}`)
      expect(byIdentifier.body, spelling).toBe(byCode.body)
      expect(byIdentifier.headers.etag).toBe(byCode.headers.etag)
    }
    // The package wrote this one in upper case; lower case finds it too.
    const eleven = await get(`/api/v1/lessons?standard=${CASE_ITEMS['1B-AP-11']!.identifier.toLowerCase()}`)
    expect(slugsOf(eleven.json())).toEqual(naming('1B-AP-11'))
    // A code without an identifier is still found by its code.
    expect(slugsOf((await get('/api/v1/lessons?standard=1B-AP-09')).json())).toEqual(naming('1B-AP-09'))
  })

  it('narrows by tier as well, and answers an empty list for a standard no lesson has', async () => {
    const builder = await get('/api/v1/lessons?tier=builder&standard=1B-AP-10')
    expect(slugsOf(builder.json())).toEqual(naming('1B-AP-10', 'builder'))
    const reversed = await get('/api/v1/lessons?standard=1B-AP-10&tier=builder')
    expect(reversed.body).toBe(builder.body)
    const empty = { lessons: [], total: 0 }
    for (const url of [
      '/api/v1/lessons?tier=explorer&standard=1B-AP-10',
      '/api/v1/lessons?standard=9Z-XX-99',
      '/api/v1/lessons?standard=1b-ap-10',
      '/api/v1/lessons?standard=00000000-0000-4000-8000-000000000000',
    ]) {
      const res = await get(url)
      expect(res.statusCode, url).toBe(200)
      expect(res.json(), url).toEqual(empty)
    }
  })

  it('refuses a value that cannot name a standard with a problem naming the parameter', async () => {
    for (const value of ['%20', '1B%20AP', '1B/AP-08', '-1B-AP-08', '%00', '%C3%A9', 'a'.repeat(65), '1B-AP-08%26x']) {
      const res = await get(`/api/v1/lessons?standard=${value}`)
      expect(res.statusCode, value).toBe(400)
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
      const problem = res.json()
      expect(problem.code).toBe('invalid_request')
      expect(problem.errors, value).toEqual([expect.objectContaining({ in: 'query', field: 'standard' })])
    }
    const empty = await get('/api/v1/lessons?standard=')
    expect(empty.statusCode).toBe(400)
    const twice = await get('/api/v1/lessons?standard=1B-AP-08&standard=1B-AP-11')
    expect(twice.statusCode).toBe(400)
    expect(twice.json().errors).toEqual([
      { in: 'query', field: 'standard', detail: 'must be a string (give the parameter once)' },
    ])
    const slash = await get('/api/v1/lessons?standard=1B/AP-08')
    expect(slash.json().errors[0].detail).toBe(
      "must be a framework's code such as 1B-AP-08 (letters, digits, '.', '-', '_' and ':') or a CASE identifier (a UUID)",
    )
  })

  it('gives each list a strong ETag and answers If-None-Match with 304', async () => {
    const first = await get('/api/v1/lessons?standard=1B-AP-08')
    const etag = String(first.headers.etag)
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/)
    expect(etag).not.toBe((await get('/api/v1/lessons?standard=1B-AP-10')).headers.etag)
    expect(etag).not.toBe((await get('/api/v1/lessons')).headers.etag)
    const again = await get('/api/v1/lessons?standard=1B-AP-08', { 'if-none-match': etag })
    expect(again.statusCode).toBe(304)
    expect(again.body).toBe('')
    expect(again.headers.etag).toBe(etag)
  })

  it('answers a code or identifier as the catalog holds it on the fast path, any other spelling through the router', async () => {
    await get('/api/v1/tiers')
    const before = t.routed
    await get('/api/v1/lessons?standard=1B-AP-08')
    await get(`/api/v1/lessons?standard=${CASE_ITEMS['1B-AP-08']!.identifier}`)
    expect(t.routed - before).toBe(REQUEST_PATH === 'fast' ? 0 : 2)
    await get(`/api/v1/lessons?standard=${CASE_ITEMS['1B-AP-08']!.identifier.toUpperCase()}`)
    await get('/api/v1/lessons?standard=9Z-XX-99')
    expect(t.routed - before).toBe(REQUEST_PATH === 'fast' ? 2 : 4)
  })

  it('serves lessons imported before alignments were stored with their codes alone', async () => {
    await t.storage.db.updateTable('lessons').set({ standards_alignment: null }).execute()
    await t.app.services.catalog.reload()
    const lesson = (await get('/api/v1/lessons/builder/b1-what-is-an-algorithm')).json()
    expect(lesson.standardsAlignment).toEqual([
      { framework: 'csta', code: '1B-AP-08' },
      { framework: 'csta', code: '1B-AP-11' },
    ])
    expect(slugsOf((await get('/api/v1/lessons?standard=1B-AP-08')).json())).toEqual(naming('1B-AP-08'))
    expect((await get(`/api/v1/lessons?standard=${CASE_ITEMS['1B-AP-08']!.identifier}`)).json().total).toBe(0)
  })
})
