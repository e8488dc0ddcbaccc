import { describe, expect, it } from 'vitest'
import { DISCLOSURE_ACTIONS, DISCLOSURE_OUTCOMES } from '../../src/domain/disclosure.js'
import type { Storage } from '../../src/storage/connection.js'
import {
  type DisclosureFilter,
  listDisclosures,
  pageDisclosures,
  recordDisclosure,
  recordDisclosures,
  sealSegments,
} from '../../src/storage/disclosure-log.js'
import type { DisclosureRow } from '../../src/storage/tables.js'
import { createTestStorage } from '../helper.js'
import { perTest } from '../support/built.js'

const T0 = Date.parse('2026-03-01T00:00:00.000Z')
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`
const STUDENTS = [1, 2, 3, 4, 5].map((n) => uuid(100 + n))
const ORGS = [1, 2].map((n) => uuid(200 + n))
const KEYS = [1, 2, 3].map((n) => uuid(300 + n))

/** The rows `filter` must return, newest first, worked out without the log's lookups. */
function expected(all: DisclosureRow[], filter: DisclosureFilter): number[] {
  return all
    .filter(
      (row) =>
        (filter.studentId === undefined || row.student_id === filter.studentId) &&
        (filter.organisationId === undefined || row.organisation_id === filter.organisationId) &&
        (filter.keyId === undefined || row.key_id === filter.keyId) &&
        (filter.action === undefined || row.action === filter.action) &&
        (filter.outcome === undefined || row.outcome === filter.outcome) &&
        (filter.since === undefined || Date.parse(row.at) >= filter.since) &&
        (filter.until === undefined || Date.parse(row.at) < filter.until),
    )
    .map((row) => Number(row.id))
    .sort((a, b) => b - a)
}

/** Every page of `filter`, `limit` at a time, following `next`. */
async function allPages(storage: Storage, filter: DisclosureFilter, limit: number): Promise<number[]> {
  const ids: number[] = []
  let before: number | undefined
  for (let pages = 0; pages < 1000; pages++) {
    const page = await pageDisclosures(storage.db, filter, limit, before)
    expect(page.rows.length).toBeLessThanOrEqual(limit)
    ids.push(...page.rows.map((row) => row.id))
    if (page.next === null) return ids
    expect(page.rows).toHaveLength(limit)
    before = page.next
  }
  throw new Error('the pages never ended')
}

const FILTERS: DisclosureFilter[] = [
  {},
  { studentId: STUDENTS[0] },
  { studentId: STUDENTS[4], outcome: 'denied_scope' },
  { organisationId: ORGS[1] },
  { organisationId: ORGS[0], action: 'enroll' },
  { keyId: KEYS[2] },
  { keyId: KEYS[0], studentId: STUDENTS[1] },
  { outcome: 'disclosed' },
  { since: T0 + 40 * 60_000 },
  { until: T0 + 25 * 60_000 },
  { studentId: STUDENTS[2], since: T0 + 20 * 60_000, until: T0 + 90 * 60_000 },
  { studentId: uuid(999) },
]

describe('the disclosure log', () => {
  const storage = perTest(() => createTestStorage({ catalog: false }))

  /** Writes `count` rows one minute apart, cycling through students, organisations, keys, actions and outcomes. */
  async function write(count: number, from = 0): Promise<void> {
    for (let i = from; i < from + count; i++) {
      // Not in id order: a request's time is taken before its row is written.
      const at = T0 + i * 60_000 - (i % 3) * 90_000
      await recordDisclosure(
        storage.db,
        { at, requestId: `req-${i}`, keyId: KEYS[i % 3]!, organisationId: ORGS[i % 2]! },
        STUDENTS[i % 5]!,
        DISCLOSURE_ACTIONS[i % 2]!,
        DISCLOSURE_OUTCOMES[i % 7]!,
      )
    }
  }

  const seal = (now = T0 + 10 ** 9, horizonMs = 0) =>
    sealSegments(storage.db, {
      segmentRows: 10,
      horizonMs,
      now,
      write: (work) => storage.writes.transaction(work),
    })

  it('pages through every filter the same before, during and after sealing, never skipping or repeating a row', async () => {
    await write(137)
    const all = await storage.db.selectFrom('disclosures').selectAll().execute()
    const check = async () => {
      for (const filter of FILTERS) {
        for (const limit of [1, 7, 500]) {
          expect(await allPages(storage, filter, limit), JSON.stringify({ filter, limit })).toEqual(
            expected(all, filter),
          )
        }
      }
    }
    await check()
    // Only complete segments with a later row are sealed: ids 1-130 of 137.
    expect(await seal()).toBe(13)
    const segments = await storage.db.selectFrom('disclosure_segments').selectAll().orderBy('first_id').execute()
    expect(segments.map((s) => [Number(s.first_id), Number(s.last_id), s.rows])).toEqual(
      Array.from({ length: 13 }, (_, k) => [k * 10 + 1, k * 10 + 10, 10]),
    )
    const lookups = await storage.db
      .selectFrom('disclosure_lookup')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .executeTakeFirstOrThrow()
    expect(Number(lookups.n)).toBe(130 * 3)
    await check()
    expect(await seal()).toBe(0)
  })

  it('finds a row the moment it is written, sealed segments or not', async () => {
    await write(60)
    await seal()
    const before = await listDisclosures(storage.db, { studentId: STUDENTS[3] })
    await write(1, 1000)
    const after = await listDisclosures(storage.db, { studentId: STUDENTS[0] })
    expect(after[0]).toMatchObject({ request_id: 'req-1000' })
    expect(await listDisclosures(storage.db, { studentId: STUDENTS[3] })).toEqual(before)
  })

  it('keeps a page stable when rows are written between pages', async () => {
    await write(45)
    await seal()
    const first = await pageDisclosures(storage.db, { organisationId: ORGS[0] }, 5)
    await write(30, 45)
    await seal()
    const second = await pageDisclosures(storage.db, { organisationId: ORGS[0] }, 5, first.next!)
    expect(Math.max(...second.rows.map((r) => r.id))).toBeLessThan(Math.min(...first.rows.map((r) => r.id)))
    expect(second.rows.map((r) => r.id)).toEqual(
      expected(await storage.db.selectFrom('disclosures').selectAll().execute(), { organisationId: ORGS[0] })
        .filter((id) => id < first.next!)
        .slice(0, 5),
    )
  })

  it('waits out the horizon before sealing, and seals the same segment once when instances race', async () => {
    await write(25)
    const lastAt = Date.parse((await listDisclosures(storage.db, { limit: 1 }))[0]!.at)
    // Rows after the first segment are younger than the horizon: nothing is sealed yet.
    expect(await seal(lastAt, 10 * 60 * 60_000)).toBe(0)
    const results = await Promise.all([seal(), seal(), seal()])
    expect(results.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(2)
    const segments = await storage.db.selectFrom('disclosure_segments').selectAll().execute()
    expect(segments).toHaveLength(2)
    const lookups = await storage.db.selectFrom('disclosure_lookup').selectAll().execute()
    expect(lookups).toHaveLength(20 * 3)
    const all = await storage.db.selectFrom('disclosures').selectAll().execute()
    expect(await allPages(storage, { keyId: KEYS[1] }, 3)).toEqual(expected(all, { keyId: KEYS[1] }))
  })

  it('pauses between its writes, and a request write queued during a pause commits before the next one', async () => {
    await write(25)
    const steps: string[] = []
    let request = 0
    const sealed = await sealSegments(storage.db, {
      segmentRows: 10,
      horizonMs: 0,
      now: T0 + 10 ** 9,
      write: (work) =>
        storage.writes.transaction(async (trx) => {
          steps.push('seal')
          return work(trx)
        }),
      pause: async () => {
        steps.push('pause')
        const n = ++request
        await storage.writes.transaction(async (trx) => {
          steps.push(`request ${n}`)
          await recordDisclosure(
            trx,
            { at: T0, requestId: `during-${n}`, keyId: KEYS[0]!, organisationId: ORGS[0]! },
            STUDENTS[0]!,
            'progress.read',
            'disclosed',
          )
        })
        return true
      },
    })
    // Rows 1-25 and the pause's own rows: two segments of 10 complete and followed by a row.
    expect(sealed).toBe(2)
    expect(steps).toEqual(['seal', ...[1, 2, 3, 4, 5].flatMap((n) => ['pause', `request ${n}`, 'seal'])])
  })

  it('ends a run at a pause that says stop, and the next run finishes the segment', async () => {
    await write(25)
    const run = (pauses: boolean[]) =>
      sealSegments(storage.db, {
        segmentRows: 10,
        horizonMs: 0,
        now: T0 + 10 ** 9,
        write: (work) => storage.writes.transaction(work),
        pause: async () => pauses.shift() ?? true,
      })
    // One dimension written, then stopped: the segment is not sealed, and queries still scan it.
    expect(await run([false])).toBe(0)
    expect(await storage.db.selectFrom('disclosure_segments').selectAll().execute()).toHaveLength(0)
    const all = await storage.db.selectFrom('disclosures').selectAll().execute()
    expect(await allPages(storage, { studentId: STUDENTS[1] }, 4)).toEqual(expected(all, { studentId: STUDENTS[1] }))
    expect(await run([])).toBe(2)
    const lookups = await storage.db.selectFrom('disclosure_lookup').selectAll().execute()
    expect(lookups).toHaveLength(20 * 3)
    expect(await allPages(storage, { studentId: STUDENTS[1] }, 4)).toEqual(expected(all, { studentId: STUDENTS[1] }))
  })
})

describe('a list disclosure', () => {
  it('writes one row per student, in as many statements as needed, all or nothing with its transaction', async () => {
    const storage = await createTestStorage({ catalog: false })
    try {
      const ids = Array.from({ length: 1203 }, (_, i) => uuid(10_000 + i))
      const context = { at: T0, requestId: 'req-list', keyId: KEYS[0]!, organisationId: ORGS[0]! }
      await storage.writes.transaction((trx) => recordDisclosures(trx, context, ids, 'progress.read', 'disclosed'))
      const rows = await listDisclosures(storage.db, { keyId: KEYS[0], limit: 5000 })
      expect(rows.map((row) => row.student_id).sort()).toEqual([...ids].sort())
      expect(new Set(rows.map((row) => row.request_id))).toEqual(new Set(['req-list']))
      await expect(
        storage.writes.transaction(async (trx) => {
          await recordDisclosures(trx, { ...context, requestId: 'req-undone' }, ids, 'progress.read', 'disclosed')
          throw new Error('the answer could not be sent')
        }),
      ).rejects.toThrow('could not be sent')
      expect(await listDisclosures(storage.db, { keyId: KEYS[0], limit: 5000 })).toHaveLength(1203)
    } finally {
      await storage.close()
    }
  })
})
