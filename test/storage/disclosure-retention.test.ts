/**
 * Retention of the disclosure log: whole sealed segments older than the cutoff go, oldest first,
 * with their lookups, never the newest sealed one; a run stopped between two of its writes hides
 * the segment at once and leaves the rest for the next run; queries and sealing go on unchanged
 * over what is left.
 */
import { beforeEach, describe, expect, it } from 'vitest'
import { pageDisclosures, recordDisclosure, sealSegments } from '../../src/storage/disclosure-log.js'
import { type DisclosurePruneOptions, pruneDisclosureLog } from '../../src/storage/disclosure-retention-repository.js'
import { createTestStorage } from '../helper.js'
import { perTest } from '../support/built.js'

const T0 = Date.parse('2026-03-01T00:00:00.000Z')
const minute = (n: number) => new Date(T0 + n * 60_000).toISOString()
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i)

describe('disclosure log retention', () => {
  const storage = perTest(() => createTestStorage({ catalog: false }))
  let write: DisclosurePruneOptions['write']
  beforeEach(async () => {
    write = (work) => storage.writes.transaction(work)
  })

  /** Rows `from`..`to`, row `i` written at minute `i`, for student `i % 3`. */
  async function record(from: number, to: number) {
    for (let i = from; i <= to; i++)
      await recordDisclosure(
        storage.db,
        { at: T0 + i * 60_000, requestId: `req-${i}`, keyId: uuid(300), organisationId: uuid(200) },
        uuid(100 + (i % 3)),
        'progress.read',
        'disclosed',
      )
  }
  const seal = () => sealSegments(storage.db, { segmentRows: 10, horizonMs: 0, now: T0 + 10 ** 9, write })

  /** Ids every page of a query returns, oldest first: all rows, and one student's through the lookups. */
  async function listed(studentId?: string): Promise<number[]> {
    const ids: number[] = []
    let before: number | undefined
    for (;;) {
      const page = await pageDisclosures(storage.db, studentId === undefined ? {} : { studentId }, 7, before)
      ids.push(...page.rows.map((row) => Number(row.id)))
      if (page.next === null) return ids.sort((a, b) => a - b)
      before = page.next
    }
  }
  const ids = async (table: 'disclosures' | 'disclosure_segments') =>
    table === 'disclosures'
      ? (await storage.db.selectFrom('disclosures').select('id').orderBy('id').execute()).map((r) => Number(r.id))
      : (await storage.db.selectFrom('disclosure_segments').select('first_id').orderBy('first_id').execute()).map((r) =>
          Number(r.first_id),
        )
  const lowestLookup = async () =>
    Number(
      (
        await storage.db
          .selectFrom('disclosure_lookup')
          .select((eb) => eb.fn.min('segment').as('m'))
          .executeTakeFirst()
      )?.m,
    )

  it('deletes the sealed segments older than the cutoff with their lookups, and queries see the rest', async () => {
    await record(1, 55)
    expect(await seal()).toBe(5)
    expect(await pruneDisclosureLog(storage.db, { before: minute(25), write })).toBe(2)
    expect(await ids('disclosure_segments')).toEqual([21, 31, 41])
    expect(await ids('disclosures')).toEqual(range(21, 55))
    expect(await lowestLookup()).toBe(21)
    expect(await listed()).toEqual(range(21, 55))
    expect(await listed(uuid(101))).toEqual(range(21, 55).filter((i) => i % 3 === 1))
    // Again with the same cutoff: nothing more.
    expect(await pruneDisclosureLog(storage.db, { before: minute(25), write })).toBe(0)

    // However old, the newest sealed segment and the unsealed tail stay; sealing goes on after them.
    expect(await pruneDisclosureLog(storage.db, { before: minute(10 ** 6), write })).toBe(2)
    expect(await ids('disclosure_segments')).toEqual([41])
    await record(56, 70)
    // 51..60 is complete; 61..70 waits for a row after it.
    expect(await seal()).toBe(1)
    expect(await ids('disclosure_segments')).toEqual([41, 51])
    expect(await listed()).toEqual(range(41, 70))
    expect(await listed(uuid(102))).toEqual(range(41, 70).filter((i) => i % 3 === 2))
  })

  it('a run stopped after hiding a segment leaves no row of it visible, and the next run finishes it', async () => {
    await record(1, 35)
    expect(await seal()).toBe(3)
    let writes = 0
    const stopped = await pruneDisclosureLog(storage.db, {
      before: minute(25),
      write,
      pause: async () => writes++ < 1,
    })
    expect(stopped).toBe(1)
    // The segment's row went first: its rows are still stored but no query reaches them.
    expect(await ids('disclosure_segments')).toEqual([11, 21])
    expect((await ids('disclosures'))[0]).toBe(1)
    expect(await listed()).toEqual(range(11, 35))
    expect(await listed(uuid(100))).toEqual(range(11, 35).filter((i) => i % 3 === 0))

    expect(await pruneDisclosureLog(storage.db, { before: minute(25), write })).toBe(1)
    expect(await ids('disclosures')).toEqual(range(21, 35))
    expect(await lowestLookup()).toBe(21)
    expect(await listed()).toEqual(range(21, 35))
  })
})
