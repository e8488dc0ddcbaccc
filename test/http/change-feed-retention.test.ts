/**
 * GET /api/v1/progress/changes past the feed's retention: once the changes after a cursor are
 * pruned, the cursor answers 410 `cursor_expired` with a problem that says how to resync (never a
 * page that silently skips them); a cursor at the floor, a fresh one and `from=beginning` read on.
 */
import { describe, expect, it } from 'vitest'
import { changeLogFloor } from '../../src/storage/change-feed-retention-repository.js'
import { lastChangeSequence } from '../../src/storage/student-change-log.js'
import { bearer, buildTestApp, STUDENTS, type TestContext } from '../helper.js'
import { perSuite } from '../support/built.js'

const FEED = '/api/v1/progress/changes'
const DAY = 86_400_000

interface Feed {
  changes: { sequence: number; profileId: string; tier?: string }[]
  next: string
  hasMore: boolean
}

const disclosures = async (t: TestContext) =>
  Number(
    (
      await t.storage.db
        .selectFrom('disclosures')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  )

describe('change feed retention', () => {
  const t = perSuite(() =>
    buildTestApp({
      env: { FEED_RETENTION_DAYS: '2', DISCLOSURE_SEGMENT_ROWS: '2', DISCLOSURE_SEAL_HORIZON_MS: '0' },
    }),
  )

  const feed = (query: string) => t.call({ url: `${FEED}?${query}`, headers: bearer(t.fixtures.keys.read) })
  const enroll = async (tier: string) => {
    const res = await t.call({
      method: 'POST',
      url: `/api/v1/students/${STUDENTS.ada}/enroll`,
      headers: bearer(t.fixtures.keys.write),
      payload: { tier },
    })
    expect(res.statusCode, res.body).toBe(200)
  }

  it('answers 410 cursor_expired for a cursor whose next changes were pruned, and reads on from the floor', async () => {
    const old = ((await feed('from=now')).json() as Feed).next
    await enroll('innovator')
    // A cursor at the last change that is about to be pruned: exactly at the floor.
    const atFloor = ((await feed('from=now')).json() as Feed).next
    const floor = await lastChangeSequence(t.storage.db)

    t.clock.advance(3 * DAY)
    await enroll('builder')
    // Before the prune, the old cursor still reads every change after it.
    expect(((await feed(`cursor=${old}`)).json() as Feed).changes.map((c) => c.tier)).toContain('innovator')
    expect(await t.app.services.sealer.run()).toBeGreaterThan(0)
    const disclosed = await disclosures(t)
    expect(await t.app.services.pruner.run()).toBeGreaterThan(0)
    // DISCLOSURE_RETENTION_DAYS unset: the disclosure log keeps every row, old or not.
    expect(await disclosures(t)).toBe(disclosed)
    expect(await changeLogFloor(t.storage.db)).toBe(floor)

    const gone = await feed(`cursor=${old}`)
    expect(gone.statusCode, gone.body).toBe(410)
    expect(gone.headers['content-type']).toMatch(/^application\/problem\+json/)
    const problem = gone.json()
    expect(problem).toMatchObject({ type: '/docs/errors#cursor_expired', status: 410, code: 'cursor_expired' })
    expect(problem.detail).toMatch(/roster/)
    expect(problem.detail).toMatch(/cursor from now/)

    // The problem's type link lands on the catalogue entry that spells out the resync.
    const errors = await t.call({ url: '/docs/errors' })
    expect(errors.body).toMatch(/id="cursor_expired"(?:(?!<\/section>).)*Resync: take a cursor from now/s)

    const builder = ((await feed(`cursor=${atFloor}`)).json() as Feed).changes
    expect(builder.map((c) => [c.profileId, c.tier])).toEqual([[STUDENTS.ada, 'builder']])
    expect(((await feed('from=beginning')).json() as Feed).changes).toEqual(builder)

    // A fresh cursor keeps working after the prune.
    const fresh = ((await feed('from=now')).json() as Feed).next
    await enroll('explorer')
    const after = await feed(`cursor=${fresh}`)
    expect(after.statusCode, after.body).toBe(200)
    expect((after.json() as Feed).changes.map((c) => c.tier)).toEqual(['explorer'])
  })

  it('declares 410 among the feed responses of the OpenAPI document', async () => {
    const document = (await t.call({ url: '/api/v1/openapi.json' })).json()
    const responses = document.paths['/api/v1/progress/changes'].get.responses
    expect(responses['410'].description).toContain('cursor_expired')
    expect(document.paths['/api/v1/students'].get.responses['410']).toBeUndefined()
  })

  it("with DISCLOSURE_RETENTION_DAYS, the same runs delete the disclosure log's old segments", async () => {
    const other = await buildTestApp({
      env: { DISCLOSURE_RETENTION_DAYS: '1', DISCLOSURE_SEGMENT_ROWS: '2', DISCLOSURE_SEAL_HORIZON_MS: '0' },
    })
    try {
      const read = () =>
        other.call({ url: `/api/v1/students/${STUDENTS.ada}/progress`, headers: bearer(other.fixtures.keys.read) })
      for (let i = 0; i < 4; i++) expect((await read()).statusCode).toBe(200)
      other.clock.advance(2 * DAY)
      for (let i = 0; i < 4; i++) expect((await read()).statusCode).toBe(200)
      expect(await other.app.services.sealer.run()).toBeGreaterThan(1)
      const before = await disclosures(other)
      expect(await other.app.services.pruner.run()).toBeGreaterThan(0)
      const left = await other.storage.db.selectFrom('disclosures').select('at').execute()
      expect(left.length).toBeLessThan(before)
      // Every row of the first day's reads is gone; the second day's are kept.
      expect(left.filter((row) => Date.parse(row.at) < other.clock.now() - DAY)).toEqual([])
      expect(left.length).toBeGreaterThanOrEqual(4)
    } finally {
      await other.close()
    }
  })
})
