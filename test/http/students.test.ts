import { beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { listDisclosures } from '../../src/storage/disclosure-log.js'
import { bearer, buildTestApp, loadSampleCatalog, STUDENTS } from '../helper.js'
import { perSuite } from '../support/built.js'

const progressUrl = (id: string) => `/api/v1/students/${id}/progress`
const enrollUrl = (id: string) => `/api/v1/students/${id}/enroll`

describe('student endpoints', () => {
  const t = perSuite(() => buildTestApp({ env: { RATE_LIMIT: '100000', ORGANISATION_RATE_LIMIT: '100000' } }))
  let read: { authorization: string }
  let write: { authorization: string }
  let both: { authorization: string }
  beforeAll(async () => {
    read = bearer(t.fixtures.keys.read)
    write = bearer(t.fixtures.keys.write)
    both = bearer(t.fixtures.keys.readWrite)
  })
  beforeEach(() => t.clock.advance(1000))

  describe('GET progress', () => {
    it('returns the first name, tier, entries in catalog order and the summary', async () => {
      const res = await t.call({ url: progressUrl(STUDENTS.ada), headers: read })
      expect(res.statusCode).toBe(200)
      const body = res.json()
      expect(Object.keys(body)).toEqual(['profileId', 'displayName', 'tier', 'progress', 'summary'])
      expect(body.profileId).toBe(STUDENTS.ada)
      expect(body.displayName).toBe('Ada')
      expect(body.tier).toBe('explorer')
      // Catalog order (explorer e1, e2, then builder b1); a lesson no longer in the catalog comes last.
      expect(body.progress.map((entry: { lessonSlug: string }) => entry.lessonSlug)).toEqual([
        'explorer/e1-robots-follow-instructions',
        'explorer/e2-steps-in-order',
        'builder/b1-what-is-an-algorithm',
        'explorer/e99-retired-lesson',
      ])
      expect(body.progress[1]).toEqual({
        lessonSlug: 'explorer/e2-steps-in-order',
        status: 'in_progress',
        xp: 20,
        timeSeconds: 300,
        startedAt: '2026-02-28T09:00:00.000Z',
        completedAt: null,
      })
      expect(body.summary).toEqual({
        totalLessons: loadSampleCatalog().lessons.filter((l) => l.tier === 'explorer').length,
        // e1 and the retired explorer lesson are completed in the current tier; b1 is another tier.
        completedLessons: 2,
        totalXp: 100 + 20 + 120 + 10,
        totalTimeSeconds: 900 + 300 + 1200 + 60,
      })
    })

    it('holds the summary invariants for every visible student', async () => {
      for (const id of [STUDENTS.ada, STUDENTS.ben, STUDENTS.dev]) {
        const body = (await t.call({ url: progressUrl(id), headers: read })).json()
        const { summary, progress, tier } = body
        expect(summary.completedLessons).toBeLessThanOrEqual(
          progress.filter((p: { status: string }) => p.status === 'completed').length,
        )
        expect(summary.completedLessons).toBe(
          progress.filter(
            (p: { status: string; lessonSlug: string }) =>
              p.status === 'completed' && p.lessonSlug.startsWith(`${tier}/`),
          ).length,
        )
        expect(summary.totalXp).toBe(progress.reduce((sum: number, p: { xp: number }) => sum + p.xp, 0))
        expect(summary.totalTimeSeconds).toBe(
          progress.reduce((sum: number, p: { timeSeconds: number }) => sum + p.timeSeconds, 0),
        )
        for (const entry of progress) expect(entry.completedAt === null).toBe(entry.status === 'in_progress')
      }
    })

    it('returns an empty progress list for a student who has not started', async () => {
      const body = (await t.call({ url: progressUrl(STUDENTS.dev), headers: read })).json()
      expect(body.progress).toEqual([])
      expect(body.summary).toMatchObject({ completedLessons: 0, totalXp: 0, totalTimeSeconds: 0 })
      expect(body.summary.totalLessons).toBeGreaterThan(0)
    })

    it('accepts an upper-case UUID and answers with the canonical one', async () => {
      const res = await t.call({ url: progressUrl(STUDENTS.ada.toUpperCase()), headers: read })
      expect(res.statusCode).toBe(200)
      expect(res.json().profileId).toBe(STUDENTS.ada)
    })

    it('answers a malformed id with 400 naming the path parameter', async () => {
      for (const id of ['123', 'not-a-uuid', `${STUDENTS.ada}x`, '11111111111141118111111111111111']) {
        const res = await t.call({ url: progressUrl(id), headers: read })
        expect(res.statusCode, id).toBe(400)
        expect(res.json().errors).toEqual([
          { in: 'path', field: 'id', detail: expect.stringContaining('must be a UUID') },
        ])
      }
    })

    it("answers another organisation's student exactly like an unknown one", async () => {
      const other = await t.call({ url: progressUrl(STUDENTS.cleo), headers: read })
      const unknown = await t.call({ url: progressUrl(STUDENTS.nobody), headers: read })
      expect(other.statusCode).toBe(404)
      expect(unknown.statusCode).toBe(404)
      const strip = (body: Record<string, unknown>, id: string) => ({
        ...body,
        requestId: undefined,
        detail: String(body.detail).replace(id, 'ID'),
      })
      expect(strip(other.json(), STUDENTS.cleo)).toEqual(strip(unknown.json(), STUDENTS.nobody))
      expect(other.json().code).toBe('student_not_found')
    })

    it('records every read in the disclosure log, with the request id', async () => {
      const res = await t.call({ url: progressUrl(STUDENTS.ben), headers: read })
      const miss = await t.call({ url: progressUrl(STUDENTS.cleo), headers: read })
      const rows = await listDisclosures(t.storage.db, { keyId: t.fixtures.keyIds.read, limit: 2 })
      expect(rows.map((row) => [row.student_id, row.action, row.outcome, row.request_id])).toEqual([
        [STUDENTS.cleo, 'progress.read', 'not_found', miss.headers['x-request-id']],
        [STUDENTS.ben, 'progress.read', 'disclosed', res.headers['x-request-id']],
      ])
      expect(rows[1]).toMatchObject({
        organisation_id: t.fixtures.orgs.acme,
        at: new Date(t.clock.now()).toISOString(),
      })
    })
  })

  describe('POST enroll', () => {
    it('sets the tier and says when it changed', async () => {
      const res = await t.call({
        method: 'POST',
        url: enrollUrl(STUDENTS.dev),
        headers: write,
        payload: { tier: 'builder' },
      })
      expect(res.statusCode).toBe(200)
      expect(res.json()).toEqual({
        profileId: STUDENTS.dev,
        tier: 'builder',
        updatedAt: new Date(t.clock.now()).toISOString(),
      })
      expect(res.json().updatedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      const progress = (await t.call({ url: progressUrl(STUDENTS.dev), headers: read })).json()
      expect(progress.tier).toBe('builder')
      expect(progress.summary.totalLessons).toBe(loadSampleCatalog().lessons.filter((l) => l.tier === 'builder').length)
    })

    it('changes nothing when the tier is already set, and returns the stored time', async () => {
      const first = await t.call({
        method: 'POST',
        url: enrollUrl(STUDENTS.ada),
        headers: write,
        payload: { tier: 'innovator' },
      })
      t.clock.advance(60_000)
      const again = await t.call({
        method: 'POST',
        url: enrollUrl(STUDENTS.ada),
        headers: write,
        payload: { tier: 'innovator' },
      })
      expect(again.statusCode).toBe(200)
      expect(again.json()).toEqual(first.json())
      const rows = await listDisclosures(t.storage.db, { studentId: STUDENTS.ada, action: 'enroll', limit: 2 })
      expect(rows.map((row) => row.outcome)).toEqual(['unchanged', 'updated'])
    })

    it('moves the summary to the new tier', async () => {
      await t.call({ method: 'POST', url: enrollUrl(STUDENTS.ada), headers: both, payload: { tier: 'builder' } })
      const body = (await t.call({ url: progressUrl(STUDENTS.ada), headers: both })).json()
      expect(body.tier).toBe('builder')
      expect(body.summary.completedLessons).toBe(1) // b1 only
      await t.call({ method: 'POST', url: enrollUrl(STUDENTS.ada), headers: both, payload: { tier: 'explorer' } })
    })

    it("answers another organisation's student with 404 and changes nothing", async () => {
      const res = await t.call({
        method: 'POST',
        url: enrollUrl(STUDENTS.cleo),
        headers: write,
        payload: { tier: 'explorer' },
      })
      expect(res.statusCode).toBe(404)
      const cleo = await t.storage.db
        .selectFrom('students')
        .select('tier')
        .where('id', '=', STUDENTS.cleo)
        .executeTakeFirstOrThrow()
      expect(cleo.tier).toBe('innovator')
    })

    it('lists every body problem with where it is', async () => {
      const cases: [unknown, { in: string; field: string; detail: string }[]][] = [
        [{}, [{ in: 'body', field: '/tier', detail: 'missing required field "tier"' }]],
        [{ tier: 'wizard' }, [{ in: 'body', field: '/tier', detail: 'must be one of: explorer, builder, innovator' }]],
        [{ tier: 'builder', level: 3 }, [{ in: 'body', field: '/level', detail: 'unknown field "level"' }]],
        [
          { tier: 3 },
          [
            { in: 'body', field: '/tier', detail: 'must be a string' },
            { in: 'body', field: '/tier', detail: 'must be one of: explorer, builder, innovator' },
          ],
        ],
        [['builder'], [{ in: 'body', field: '', detail: 'must be a JSON object' }]],
        [
          { tier: ['builder'] },
          [
            { in: 'body', field: '/tier', detail: 'must be a string' },
            { in: 'body', field: '/tier', detail: 'must be one of: explorer, builder, innovator' },
          ],
        ],
      ]
      for (const [payload, errors] of cases) {
        const res = await t.call({
          method: 'POST',
          url: enrollUrl(STUDENTS.dev),
          headers: { ...write, 'content-type': 'application/json' },
          payload: JSON.stringify(payload),
        })
        expect(res.statusCode, JSON.stringify(payload)).toBe(400)
        expect(res.json().code).toBe('invalid_request')
        expect(res.json().errors).toEqual(errors)
      }
    })

    it('refuses malformed JSON, an empty JSON body, other media types and large bodies', async () => {
      const post = (payload: string, contentType?: string) =>
        t.call({
          method: 'POST',
          url: enrollUrl(STUDENTS.dev),
          headers: { ...write, ...(contentType ? { 'content-type': contentType } : {}) },
          payload,
        })
      const malformed = await post('{"tier": "builder"', 'application/json')
      expect(malformed.statusCode).toBe(400)
      expect(malformed.json().code).toBe('malformed_json')
      const poisoned = await post('{"tier":"builder","__proto__":{"admin":true}}', 'application/json')
      expect(poisoned.statusCode).toBe(400)
      const empty = await post('', 'application/json')
      expect(empty.statusCode).toBe(400)
      expect(empty.json().code).toBe('malformed_json')
      const text = await post('tier=builder', 'text/plain')
      expect(text.statusCode).toBe(415)
      expect(text.json().code).toBe('unsupported_media_type')
      const form = await post('tier=builder', 'application/x-www-form-urlencoded')
      expect(form.statusCode).toBe(415)
      const large = await post(JSON.stringify({ tier: 'builder', padding: 'x'.repeat(10_000) }), 'application/json')
      expect(large.statusCode).toBe(413)
      expect(large.json().code).toBe('payload_too_large')
      const none = await t.call({ method: 'POST', url: enrollUrl(STUDENTS.dev), headers: write })
      expect(none.statusCode).toBe(400)
      expect(none.json().errors[0]).toMatchObject({ in: 'body' })
    })

    it('accepts a charset parameter on the JSON media type', async () => {
      const res = await t.call({
        method: 'POST',
        url: enrollUrl(STUDENTS.dev),
        headers: { ...write, 'content-type': 'application/json; charset=utf-8' },
        payload: '{"tier":"explorer"}',
      })
      expect(res.statusCode).toBe(200)
    })
  })
})
