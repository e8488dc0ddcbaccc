/**
 * Retention of the change log: pruning deletes only the oldest stretch of numbers older than the
 * cutoff, in batches, and records the floor with it; a feed read below the floor is `expired`
 * (never a page with a gap), at the floor or above reads on, and from the beginning starts at
 * the floor. Two instances pruning at once delete each row once and agree on the floor.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createOrganisation } from '../../src/storage/access-repository.js'
import {
  changeLogFloor,
  type PruneOptions,
  pruneChangeLog,
} from '../../src/storage/change-feed-retention-repository.js'
import { openStorage, type Storage } from '../../src/storage/connection.js'
import { recordStudentChanges, type StudentChangePage } from '../../src/storage/student-change-log.js'
import { readChangeFeed } from '../../src/cases/change-feed-read.js'
import { inTransaction } from '../../src/storage/transaction.js'
import { createTestStorage, freshDatabaseUrl } from '../helper.js'
import { rowCount } from '../support/row-count.js'

const T0 = Date.parse('2026-03-01T00:00:00.000Z')
const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString()
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`

describe('change feed retention', () => {
  const opened: Storage[] = []
  afterEach(async () => {
    // The second connection first: closing the first may drop the test's PostgreSQL schema.
    for (const storage of opened.reverse()) await storage.close()
    opened.length = 0
  })

  /** A log of notices to one organisation, one per minute from 1 to `count` (minute `n` is number `n`). */
  async function logOf(count: number, minuteOf = (n: number) => n) {
    const url = freshDatabaseUrl()
    const storage = await createTestStorage({ catalog: false, url })
    opened.push(storage)
    const organisationId = (await createOrganisation(storage.db, 'Reader', T0)).id
    for (let n = 1; n <= count; n++) {
      await inTransaction(storage.db, (trx) =>
        recordStudentChanges(trx, [
          { type: 'student_unlinked', studentId: uuid(n), organisationId, changedAt: at(minuteOf(n)) },
        ]),
      )
    }
    const reader = { organisationId, sandbox: false, at: T0, requestId: 'test', keyId: 'test-key' }
    const read = (after: number | 'now' | 'beginning', limit = 100) =>
      readChangeFeed(storage.writes, reader, after, limit)
    const write: PruneOptions['write'] = (work) => storage.writes.transaction(work)
    return { storage, url, read, write }
  }

  const sequences = (page: StudentChangePage | 'ahead' | 'expired') =>
    typeof page === 'string' ? page : page.changes.map((change) => change.sequence)

  it('deletes the changes before the cutoff in batches, records the floor, and answers expired below it', async () => {
    const { storage, read, write } = await logOf(10)
    expect(await changeLogFloor(storage.db)).toBe(0)
    // Nothing older: nothing deleted, and every cursor reads on.
    expect(await pruneChangeLog(storage.db, { before: at(1), write, batch: 3 })).toBe(0)
    expect(sequences(await read(0))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])

    const batches: number[] = []
    const deleted = await pruneChangeLog(storage.db, {
      before: at(8),
      write,
      batch: 3,
      pause: async () => {
        // Between two batches the feed is whole above the floor and expired below it.
        const floor = await changeLogFloor(storage.db)
        batches.push(floor)
        expect(sequences(await read(floor))).toEqual(Array.from({ length: 10 - floor }, (_, i) => floor + 1 + i))
        if (floor > 0) expect(await read(floor - 1)).toBe('expired')
        return true
      },
    })
    expect(deleted).toBe(7)
    expect(batches).toEqual([3, 6])
    expect(await changeLogFloor(storage.db)).toBe(7)
    const left = await storage.db.selectFrom('student_changes').select('seq').orderBy('seq').execute()
    expect(left.map((row) => Number(row.seq))).toEqual([8, 9, 10])

    const disclosures = () => rowCount(storage.db, 'disclosures')
    const before = await disclosures()
    expect(await read(0)).toBe('expired')
    expect(await read(6)).toBe('expired')
    // An expired read discloses nothing.
    expect(await disclosures()).toBe(before)
    expect(sequences(await read(7))).toEqual([8, 9, 10])
    expect(sequences(await read('beginning'))).toEqual([8, 9, 10])
    expect(sequences(await read('now'))).toEqual([])
    expect(await read(11)).toBe('ahead')

    // Pruning again with the same cutoff finds nothing more.
    expect(await pruneChangeLog(storage.db, { before: at(8), write, batch: 3 })).toBe(0)
    expect(await changeLogFloor(storage.db)).toBe(7)
  })

  it('stops at the first change within the period, so the floor never passes a kept change', async () => {
    // Number 4 was written by an instance whose clock ran ahead: minute 20.
    const { storage, read, write } = await logOf(8, (n) => (n === 4 ? 20 : n))
    expect(await pruneChangeLog(storage.db, { before: at(7), write, batch: 2 })).toBe(3)
    expect(await changeLogFloor(storage.db)).toBe(3)
    expect(sequences(await read(3))).toEqual([4, 5, 6, 7, 8])
    expect(await read(2)).toBe('expired')
  })

  it('two instances pruning at once delete each change once and agree on the floor', async () => {
    const { storage, url, write } = await logOf(40)
    const other = openStorage(url, { busyTimeoutMs: 1000 })
    opened.push(other)
    const otherWrite: PruneOptions['write'] = (work) => other.writes.transaction(work)
    const [a, b] = await Promise.all([
      pruneChangeLog(storage.db, { before: at(31), write, batch: 4 }),
      pruneChangeLog(other.db, { before: at(31), write: otherWrite, batch: 4 }),
    ])
    expect(a + b).toBe(30)
    expect(await changeLogFloor(storage.db)).toBe(30)
    expect(await rowCount(storage.db, 'student_changes')).toBe(10)
  })
})
