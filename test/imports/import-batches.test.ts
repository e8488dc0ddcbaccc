import type { Kysely } from 'kysely'
import { describe, expect, it, vi } from 'vitest'
import { ImportBatches } from '../../src/imports/import-batches.js'
import { WriteBatchSize } from '../../src/imports/write-batch-size.js'
import type { Database } from '../../src/storage/tables.js'

/** A database whose transactions are marked objects, counting how many were opened. */
function fakeDb() {
  const opened: object[] = []
  const db = {
    transaction: () => ({
      execute: async <T>(work: (trx: object) => Promise<T>) => {
        const trx = { transaction: opened.length }
        opened.push(trx)
        return work(trx)
      },
    }),
  }
  return { db: db as unknown as Kysely<Database>, opened }
}

describe('the batches an import writes in', () => {
  it("runs each batch in the caller's transaction, then its pause", async () => {
    const { db, opened } = fakeDb()
    let paused = 0
    const batches = new ImportBatches(db, false, new WriteBatchSize(), async () => {
      paused++
    })
    expect(await batches.unit(async (trx) => (trx === db ? 'root' : 'other'))).toBe('root')
    expect([opened.length, paused]).toEqual([0, 1])
  })

  it('runs each batch in a transaction of its own, sized by the time it held the lock, then pauses', async () => {
    const { db, opened } = fakeDb()
    const size = new WriteBatchSize({ first: 200, min: 25, max: 1000 })
    const batches = new ImportBatches(db, true, size)
    const started = performance.now()
    await batches.unit(async (trx) => {
      expect(batches.db).toBe(trx)
      await new Promise((resolve) => setTimeout(resolve, 40))
    }, 100)
    expect(batches.db).toBe(db)
    expect(opened).toHaveLength(1)
    // 100 rows held the lock about 40 ms, twice the 20 ms target: about 50 rows next.
    expect(size.rows).toBeGreaterThanOrEqual(25)
    expect(size.rows).toBeLessThanOrEqual(50)
    // The pause after it is as long as the lock was held.
    expect(performance.now() - started).toBeGreaterThanOrEqual(2 * 40 - 5)
  })

  it('runs batches of its own without a size (PostgreSQL) with no pause after them', async () => {
    const { db, opened } = fakeDb()
    const batches = new ImportBatches(db, true, undefined)
    vi.useFakeTimers()
    try {
      // A pause would wait on a timer that fake time never fires.
      await batches.unit(async () => {})
      await batches.unit(async () => {})
    } finally {
      vi.useRealTimers()
    }
    expect(opened).toHaveLength(2)
  })
})
