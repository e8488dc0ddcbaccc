import { beforeAll, describe, expect, it } from 'vitest'
import { readCatalog, replaceCatalog } from '../../src/storage/catalog-repository.js'
import { SLUG } from '../../src/domain/slug.js'
import { TIER_IDS } from '../../src/domain/tiers.js'
import { bearer, buildTestApp, loadSampleCatalog } from '../helper.js'
import { perSuite } from '../support/built.js'

describe('catalog endpoints', () => {
  const t = perSuite(() => buildTestApp({ env: { RATE_LIMIT: '100000', ORGANISATION_RATE_LIMIT: '100000' } }))
  let auth: { authorization: string }
  beforeAll(async () => {
    auth = bearer(t.fixtures.keys.catalog)
  })

  describe('GET /api/v1/tiers', () => {
    it('lists the three tiers in catalog order with their lesson counts', async () => {
      const res = await t.call({ url: '/api/v1/tiers', headers: auth })
      expect(res.statusCode).toBe(200)
      const { tiers } = res.json()
      expect(tiers.map((tier: { id: string }) => tier.id)).toEqual(['explorer', 'builder', 'innovator'])
      const catalog = loadSampleCatalog()
      for (const tier of tiers) {
        expect(tier.lessonCount).toBe(catalog.lessons.filter((lesson) => lesson.tier === tier.id).length)
        expect(tier.ageRange).toMatch(/^\d+-\d+$/)
        expect(Object.keys(tier)).toEqual(['id', 'label', 'ageRange', 'lessonCount'])
      }
    })

    it('refuses query parameters it does not know', async () => {
      const res = await t.call({ url: '/api/v1/tiers?limit=5', headers: auth })
      expect(res.statusCode).toBe(400)
      expect(res.json().errors).toEqual([{ in: 'query', field: 'limit', detail: 'unknown query parameter "limit"' }])
    })
  })

  describe('GET /api/v1/lessons', () => {
    it('lists every lesson in catalog order, with total', async () => {
      const res = await t.call({ url: '/api/v1/lessons', headers: auth })
      expect(res.statusCode).toBe(200)
      const body = res.json()
      expect(body.total).toBe(body.lessons.length)
      expect(body.total).toBe(loadSampleCatalog().lessons.length)
      expect(body.total).toBeGreaterThanOrEqual(24)
      const ids = body.lessons.map((lesson: { lessonId: string }) => lesson.lessonId)
      // Tier order first, then numeric lesson order (e2 before e10).
      expect(ids.slice(0, 10)).toEqual(['e1', 'e2', 'e3', 'e4', 'e5', 'e6', 'e7', 'e8', 'e9', 'e10'])
      expect(ids[10]).toBe('b1')
      for (const lesson of body.lessons) {
        expect(Object.keys(lesson)).toEqual(['slug', 'lessonId', 'tier', 'title', 'slideCount'])
        expect(lesson.slug).toBe(`${lesson.tier}/${lesson.slug.split('/')[1]}`)
        expect(lesson.slug.split('/')[1].startsWith(`${lesson.lessonId}-`)).toBe(true)
      }
    })

    it.each(['explorer', 'builder', 'innovator'])('filters by tier=%s', async (tier) => {
      const res = await t.call({ url: `/api/v1/lessons?tier=${tier}`, headers: auth })
      expect(res.statusCode).toBe(200)
      const body = res.json()
      expect(body.lessons.length).toBeGreaterThanOrEqual(8)
      expect(body.total).toBe(body.lessons.length)
      expect(body.lessons.every((lesson: { tier: string }) => lesson.tier === tier)).toBe(true)
    })

    it('explains a bad tier', async () => {
      const res = await t.call({ url: '/api/v1/lessons?tier=wizard', headers: auth })
      expect(res.statusCode).toBe(400)
      const body = res.json()
      expect(body.code).toBe('invalid_request')
      expect(body.errors).toEqual([
        { in: 'query', field: 'tier', detail: 'must be one of: explorer, builder, innovator' },
      ])
    })

    it('refuses a repeated tier and an empty tier', async () => {
      for (const query of ['tier=explorer&tier=builder', 'tier=', 'Tier=explorer']) {
        const res = await t.call({ url: `/api/v1/lessons?${query}`, headers: auth })
        expect(res.statusCode, query).toBe(400)
      }
    })
  })

  describe('GET /api/v1/lessons/:slug', () => {
    const slug = 'explorer/e1-robots-follow-instructions'

    it('returns lesson metadata with the slash kept in the path', async () => {
      const res = await t.call({ url: `/api/v1/lessons/${slug}`, headers: auth })
      expect(res.statusCode).toBe(200)
      const lesson = res.json()
      const source = loadSampleCatalog().lessons.find((l) => l.slug === slug)!
      expect(lesson).toEqual({
        slug,
        lessonId: 'e1',
        tier: 'explorer',
        title: source.title,
        slideCount: source.slides.length,
        contentTypes: [...new Set(source.slides.map((s) => s.type))].sort(),
        standards: source.standards,
        // The sample catalog has no CASE maps (catalog-standards.test.ts imports one): codes alone.
        standardsAlignment: Object.entries(source.standards).flatMap(([framework, codes]) =>
          codes.map((code) => ({ framework, code })),
        ),
      })
    })

    it('accepts an encoded slash too', async () => {
      const res = await t.call({ url: `/api/v1/lessons/${encodeURIComponent(slug)}`, headers: auth })
      expect(res.statusCode).toBe(200)
      expect(res.json().slug).toBe(slug)
    })

    it('serves an empty standards object as {}', async () => {
      const lesson = loadSampleCatalog().lessons.find((l) => Object.keys(l.standards).length === 0)!
      const res = await t.call({ url: `/api/v1/lessons/${lesson.slug}`, headers: auth })
      expect(res.json().standards).toEqual({})
    })

    it('serves every lesson of the list', async () => {
      for (const lesson of loadSampleCatalog().lessons) {
        const res = await t.call({ url: `/api/v1/lessons/${lesson.slug}`, headers: auth })
        expect(res.statusCode).toBe(200)
        expect(res.json().contentTypes.length).toBeGreaterThan(0)
      }
    })

    it("answers 404 for any unknown slug of the contract's form (any letter, any number of digits) and 400 for a malformed one", async () => {
      for (const unknown of [
        'explorer/e77-no-such-lesson',
        'explorer/e1000-a-future-lesson',
        'innovator/s5789-z3ft',
        'builder/x0-y',
      ]) {
        const missing = await t.call({ url: `/api/v1/lessons/${unknown}`, headers: auth })
        expect(missing.statusCode, unknown).toBe(404)
        expect(missing.json().code).toBe('lesson_not_found')
      }
      for (const bad of [
        'explorer',
        'wizard/e1-x',
        'explorer/e1',
        'explorer/E1-Robots',
        '%00',
        'explorer/e1-robots%20x',
        'explorer/1-robots',
        'explorer/ee1-robots',
      ]) {
        const res = await t.call({ url: `/api/v1/lessons/${bad}`, headers: auth })
        expect(res.statusCode, bad).toBe(400)
        expect(res.json().errors[0]).toMatchObject({ in: 'path', field: 'slug' })
      }
    })

    it('answers a path below a lesson as an unknown route', async () => {
      for (const below of [
        'explorer/e1-robots-follow-instructions/anything/more',
        'explorer/e1-robots-follow-instructions/slides',
        'explorer/e1-robots/extra',
        'explorer/e1-robots-follow-instructions/',
      ]) {
        const res = await t.call({ url: `/api/v1/lessons/${below}`, headers: auth })
        expect(res.statusCode, below).toBe(404)
        expect(res.json().code).toBe('route_not_found')
      }
    })

    it('checks slugs with the pattern the OpenAPI document publishes', () => {
      const published = (
        t.app.swagger() as {
          paths: Record<string, { get: { parameters: { name: string; schema: { pattern: string } }[] } }>
        }
      ).paths['/api/v1/lessons/{slug}']!.get.parameters.find((p) => p.name === 'slug')!
      expect(new RegExp(published.schema.pattern).source).toBe(SLUG.source)
      expect(published.schema.pattern).toContain(TIER_IDS.join('|'))
    })
  })

  describe('conditional requests', () => {
    it('gives each representation a strong ETag and answers If-None-Match with 304', async () => {
      const urls = [
        '/api/v1/tiers',
        '/api/v1/lessons',
        '/api/v1/lessons?tier=builder',
        '/api/v1/lessons/explorer/e1-robots-follow-instructions',
      ]
      const tags = new Set<string>()
      for (const url of urls) {
        const first = await t.call({ url, headers: auth })
        const etag = String(first.headers.etag)
        expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/)
        tags.add(etag)
        for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
          const again = await t.call({ url, headers: { ...auth, 'if-none-match': ifNoneMatch } })
          expect(again.statusCode, `${url} ${ifNoneMatch}`).toBe(304)
          expect(again.body).toBe('')
          expect(again.headers.etag).toBe(etag)
          expect(again.headers.ratelimit).toBeDefined()
        }
        const stale = await t.call({ url, headers: { ...auth, 'if-none-match': '"stale"' } })
        expect(stale.statusCode).toBe(200)
        expect(stale.body).toBe(first.body)
      }
      expect(tags.size).toBe(urls.length)
    })

    it('answers HEAD like GET without a body', async () => {
      const res = await t.call({ method: 'HEAD', url: '/api/v1/tiers', headers: auth })
      expect(res.statusCode).toBe(200)
      expect(res.body).toBe('')
      expect(res.headers.etag).toBeDefined()
    })
  })

  describe('a new import', () => {
    it('is served after the change poll, with new ETags, and never half-imported', async () => {
      const before = await t.call({ url: '/api/v1/lessons', headers: auth })
      const sample = loadSampleCatalog()
      const changed = {
        tiers: sample.tiers.map((tier) => (tier.id === 'builder' ? { ...tier, label: 'Builders' } : tier)),
        lessons: sample.lessons.filter((lesson) => lesson.slug !== 'builder/b10-digital-citizenship'),
      }
      await replaceCatalog(t.storage.db, changed)
      // Until the poll sees the new version the old catalog is served whole.
      const stillOld = await t.call({ url: '/api/v1/lessons', headers: auth })
      expect(stillOld.body).toBe(before.body)
      await t.app.services.changes.check()
      const after = await t.call({ url: '/api/v1/lessons', headers: auth })
      expect(after.json().total).toBe(sample.lessons.length - 1)
      expect(after.headers.etag).not.toBe(before.headers.etag)
      const tiers = await t.call({ url: '/api/v1/tiers', headers: auth })
      expect(tiers.json().tiers[1]).toMatchObject({ label: 'Builders', lessonCount: 9 })
      const gone = await t.call({ url: '/api/v1/lessons/builder/b10-digital-citizenship', headers: auth })
      expect(gone.statusCode).toBe(404)
      expect(t.app.services.catalog.current.version).toBe((await readCatalog(t.storage.db)).version)
      await replaceCatalog(t.storage.db, sample)
      await t.app.services.changes.check()
      const restored = await t.call({ url: '/api/v1/lessons', headers: auth })
      expect(restored.body).toBe(before.body)
      expect(restored.headers.etag).toBe(before.headers.etag)
    })
  })
})
