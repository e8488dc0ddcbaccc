import { describe, expect, it } from 'vitest'
import { DisclosureSealer } from '../../src/services/disclosure-sealer.js'
import { pageDisclosures, recordDisclosures } from '../../src/storage/disclosure-log.js'
import { bearer, buildTestApp, STUDENTS } from '../helper.js'
import { perSuite } from '../support/built.js'

describe("the server's disclosure sealer", () => {
  const t = perSuite(() =>
    buildTestApp({
      env: { RATE_LIMIT: '100000', ORGANISATION_RATE_LIMIT: '100000', DISCLOSURE_SEGMENT_ROWS: '3' },
    }),
  )

  it('seals complete segments of the rows requests wrote, and every row stays findable by student, key and organisation', async () => {
    const read = bearer(t.fixtures.keys.read)
    const students = [STUDENTS.ada, STUDENTS.ben, STUDENTS.ada, STUDENTS.cleo, STUDENTS.ada, STUDENTS.ben, STUDENTS.ada]
    for (const id of students) {
      t.clock.advance(1000)
      const res = await t.call({ url: `/api/v1/students/${id}/progress`, headers: read })
      expect([200, 404]).toContain(res.statusCode)
    }
    const db = t.storage.db
    const before = await pageDisclosures(db, { studentId: STUDENTS.ada }, 100)
    expect(before.rows).toHaveLength(4)

    // 7 rows, segments of 3: two are complete and followed by a later row. On PostgreSQL they
    // are sealed only once the row after them is older than the horizon (60 s by default).
    if (t.storage.engine === 'postgres') {
      expect(await t.app.services.sealer.run()).toBe(0)
      t.clock.advance(60_000)
    }
    expect(await t.app.services.sealer.run()).toBe(2)
    expect(await t.app.services.sealer.run()).toBe(0)
    const after = await pageDisclosures(db, { studentId: STUDENTS.ada }, 100)
    expect(after.rows).toEqual(before.rows)
    expect((await pageDisclosures(db, { keyId: t.fixtures.keyIds.read }, 100)).rows).toHaveLength(7)
    const two = await pageDisclosures(db, { organisationId: before.rows[0]!.organisation_id }, 2)
    const rest = await pageDisclosures(db, { organisationId: before.rows[0]!.organisation_id }, 100, two.next!)
    expect([...two.rows, ...rest.rows].map((row) => row.request_id)).toEqual(
      (await pageDisclosures(db, { keyId: t.fixtures.keyIds.read }, 100)).rows.map((row) => row.request_id),
    )
  })

  it('stops a run with a backlog at its next pause, instead of sealing all of it first', async () => {
    // 120 rows in segments of 3: 39 complete segments, 117 writes with a pause between each.
    const context = { at: t.clock.now(), requestId: 'backlog', keyId: t.fixtures.keyIds.read }
    const organisationId = (await pageDisclosures(t.storage.db, {}, 1)).rows[0]!.organisation_id
    await t.storage.writes.transaction((trx) =>
      recordDisclosures(
        trx,
        { ...context, organisationId },
        Array.from({ length: 120 }, () => STUDENTS.ada),
        'progress.read',
        'disclosed',
      ),
    )
    t.clock.advance(120_000)
    const sealer = new DisclosureSealer({
      storage: t.storage,
      clock: t.clock,
      segmentRows: 3,
      horizonMs: 60_000,
      log: t.app.log,
      pauseMs: 50,
    })
    const run = sealer.run()
    await sealer.stop()
    // Stopped at the first pause: at most the segment under way when stop() was called is sealed.
    expect(await run).toBeLessThanOrEqual(1)
    const segments = await t.storage.db.selectFrom('disclosure_segments').selectAll().execute()
    expect(segments.length).toBeLessThan(10)
  })
})
