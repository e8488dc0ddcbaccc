/**
 * Request-time writes: grouped commits on SQLite, direct on PostgreSQL. Either way a unit is
 * all-or-nothing, a caller hears "done" only after its commit, and one unit's failure never
 * takes another's writes with it.
 */
import SQLite from 'better-sqlite3'
import { type Kysely, sql } from 'kysely'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { groupCommitWriteQueue } from '../../src/storage/sqlite/group-commit.js'
import type { SqliteStorage } from '../../src/storage/sqlite/open-sqlite.js'
import type { Database } from '../../src/storage/tables.js'
import { createTestStorage, sqliteOf } from '../helper.js'
import { perTest } from '../support/built.js'

const setting = (value: string) => ({ name: `write-queue-${value}`, value })

describe('WriteQueue', () => {
  const storage = perTest(() => createTestStorage({ catalog: false }))

  async function storedValues(): Promise<string[]> {
    const rows = await storage.db
      .selectFrom('settings')
      .select('value')
      .where('name', 'like', 'write-queue-%')
      .orderBy('value')
      .execute()
    return rows.map((row) => row.value)
  }

  it('commits every unit of a burst, and each caller hears back only after its rows are stored', async () => {
    const { writes } = storage
    const seenByCallers: number[] = []
    const units = Array.from({ length: 300 }, (_, i) =>
      writes
        .statement((db) =>
          db
            .insertInto('settings')
            .values(setting(String(i).padStart(3, '0')))
            .execute(),
        )
        .then(async () => {
          // Read on the plain connection: visible means committed.
          const row = await storage.db
            .selectFrom('settings')
            .select('value')
            .where('name', '=', setting(String(i).padStart(3, '0')).name)
            .executeTakeFirst()
          seenByCallers.push(row === undefined ? 0 : 1)
        }),
    )
    await Promise.all(units)
    expect(seenByCallers).toHaveLength(300)
    expect(seenByCallers.every((seen) => seen === 1)).toBe(true)
    expect(await storedValues()).toHaveLength(300)
  })

  it('undoes only the failing unit of a batch, all of it, and tells only its caller', async () => {
    const { writes } = storage
    // Stored before the burst: on PostgreSQL the units run on several connections in no fixed
    // order, so the failing duplicate must be of a row no unit of the burst writes.
    await storage.db.insertInto('settings').values(setting('0-before')).execute()
    const results = await Promise.allSettled([
      writes.transaction(async (trx) => {
        await trx.insertInto('settings').values(setting('a')).execute()
      }),
      writes.transaction(async (trx) => {
        await trx.insertInto('settings').values(setting('b-first-half')).execute()
        // The same primary key again: this unit fails after its first insert landed.
        await trx.insertInto('settings').values(setting('b-first-half')).execute()
      }),
      writes.transaction(async (trx) => {
        await trx.insertInto('settings').values(setting('c')).execute()
        return 'c done'
      }),
      writes.statement((db) => db.insertInto('settings').values(setting('0-before')).execute()),
      writes.statement((db) => db.insertInto('settings').values(setting('d')).execute()),
    ])
    expect(results.map((result) => result.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
      'rejected',
      'fulfilled',
    ])
    expect((results[2] as PromiseFulfilledResult<string>).value).toBe('c done')
    expect(await storedValues()).toEqual(['0-before', 'a', 'c', 'd'])
  })

  it('on SQLite, runs the units of one turn of the event loop in one shared transaction', async () => {
    const sqlite = process.env.TEST_DATABASE_URL === undefined
    const inTransaction = await Promise.all(
      [0, 1, 2].map(() => storage.writes.statement(async (db) => db.isTransaction)),
    )
    expect(inTransaction).toEqual([sqlite, sqlite, sqlite])
  })

  it.skipIf(process.env.TEST_DATABASE_URL !== undefined)(
    'on SQLite, a small batch that waits for company commits the units that join it in its transaction',
    async () => {
      async function twoTurns(shouldHold: boolean) {
        const joined: number[] = []
        const writes = groupCommitWriteQueue(storage.db, sqliteOf(storage).readConnection!, {
          shouldHold: () => shouldHold,
          held: (count) => joined.push(count),
        })
        const write = (value: string) =>
          writes.statement(async (trx) => {
            await trx
              .insertInto('settings')
              .values(setting(`${value}-${shouldHold}`))
              .execute()
            return trx
          })
        const first = write('first')
        // The first unit's batch is due in this turn; the second comes a turn later.
        await new Promise((resolve) => setImmediate(resolve))
        const second = write('second')
        const [a, b] = await Promise.all([first, second])
        return { sameTransaction: a === b, joined }
      }
      expect(await twoTurns(true)).toEqual({ sameTransaction: true, joined: [1] })
      expect(await twoTurns(false)).toEqual({ sameTransaction: false, joined: [] })
      expect(await storedValues()).toEqual(['first-false', 'first-true', 'second-false', 'second-true'])
    },
  )

  it.skipIf(process.env.TEST_DATABASE_URL !== undefined)(
    'on SQLite, with every small batch waiting for company, still answers each caller only once its row is stored',
    async () => {
      const writes = groupCommitWriteQueue(storage.db, sqliteOf(storage).readConnection!, {
        shouldHold: () => true,
        held: () => {},
      })
      const seen: boolean[] = []
      const units: Promise<void>[] = []
      // Paced arrivals: a few units per turn of the event loop, over many turns.
      for (let turn = 0; turn < 20; turn++) {
        for (let i = 0; i < 3; i++) {
          const name = `write-queue-paced-${turn}-${i}`
          units.push(
            writes
              .statement((db) => db.insertInto('settings').values({ name, value: name }).execute())
              .then(async () => {
                const row = await storage.db
                  .selectFrom('settings')
                  .select('name')
                  .where('name', '=', name)
                  .executeTakeFirst()
                seen.push(row !== undefined)
              }),
          )
        }
        await new Promise((resolve) => setImmediate(resolve))
      }
      await Promise.all(units)
      expect(seen).toHaveLength(60)
      expect(seen.every(Boolean)).toBe(true)
    },
  )

  it('keeps serving after a failed unit', async () => {
    await expect(storage.writes.transaction(() => Promise.reject(new Error('unit failed')))).rejects.toThrow(
      'unit failed',
    )
    await storage.writes.statement((db) => db.insertInto('settings').values(setting('after')).execute())
    expect(await storedValues()).toEqual(['after'])
  })

  it.skipIf(process.env.TEST_DATABASE_URL !== undefined)(
    'on SQLite, rejects the whole batch when the shared commit fails, and stores none of it',
    async () => {
      // A second connection holds the write lock past the busy timeout: BEGIN cannot proceed.
      const SQLite = (await import('better-sqlite3')).default
      const file = (
        await sql<{ file: string }>`select file from pragma_database_list where name = 'main'`.execute(storage.db)
      ).rows[0]!.file
      const other = new SQLite(file)
      other.pragma('busy_timeout = 0')
      other.exec('begin immediate')
      try {
        const batch = [0, 1, 2].map((i) =>
          storage.writes.statement((db) =>
            db
              .insertInto('settings')
              .values(setting(`locked-${i}`))
              .execute(),
          ),
        )
        const results = await Promise.allSettled(batch)
        expect(results.every((result) => result.status === 'rejected')).toBe(true)
        expect((results[0] as PromiseRejectedResult).reason.code).toMatch(/^SQLITE_BUSY/)
      } finally {
        other.exec('rollback')
        other.close()
      }
      expect(await storedValues()).toEqual([])
    },
  )
})

describe.runIf(process.env.TEST_DATABASE_URL === undefined)(
  'WriteQueue while another process holds the write lock',
  () => {
    let locked: SqliteStorage
    let other: SQLite.Database
    beforeEach(async () => {
      // SQLite's own busy handler would sleep through the whole second, event loop and all.
      locked = sqliteOf(await createTestStorage({ catalog: false, busyTimeoutMs: 1000 }))
      other = new SQLite(locked.readConnection!.name)
      other.exec('begin immediate')
    })
    afterEach(async () => {
      if (other.inTransaction) other.exec('rollback')
      other.close()
      await locked.close()
    })

    const insert = (i: number) => (db: Kysely<Database>) =>
      db
        .insertInto('settings')
        .values(setting(`busy-${i}`))
        .execute()

    it('waits for the lock without blocking the event loop, and stores every unit once it is free', async () => {
      // The other process ends its transaction after 150 ms, as an import's short one would.
      // The timer that ends it runs only if the wait leaves the event loop free: a blocking
      // wait would sleep out the busy timeout and fail the batch.
      const started = performance.now()
      const released = new Promise<number>((resolve) =>
        setTimeout(() => {
          other.exec('rollback')
          resolve(performance.now() - started)
        }, 150),
      )
      const units = Array.from({ length: 12 }, (_, i) =>
        i % 2 === 0 ? locked.writes.statement(insert(i)) : locked.writes.transaction(insert(i)),
      )
      await Promise.all(units)
      // Blocked, the loop would have run the timer only after the 1 s busy timeout.
      expect(await released).toBeLessThan(900)
      const rows = await locked.db
        .selectFrom('settings')
        .select('value')
        .where('name', 'like', 'write-queue-busy-%')
        .execute()
      expect(rows).toHaveLength(12)
    })

    it('gives the connection its busy timeout back after every try at BEGIN, refused or taken', async () => {
      // BEGIN is tried with no timeout; outside it, the connection waits as configured (1 s).
      // Read on the writing connection itself, which is what `readConnection` is while it is idle.
      const timeout = () => locked.readConnection!.pragma('busy_timeout', { simple: true })
      expect(timeout()).toBe(1000)
      setTimeout(() => other.exec('rollback'), 30)
      await locked.writes.statement(insert(1))
      expect(locked.readConnection!.inTransaction).toBe(false)
      expect(timeout()).toBe(1000)
    })

    it('fails the units with SQLITE_BUSY once the lock has been held for 2 s', async () => {
      const failed = await Promise.allSettled(Array.from({ length: 3 }, (_, i) => locked.writes.transaction(insert(i))))
      expect(failed.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'rejected'])
      expect((failed[0] as PromiseRejectedResult).reason).toMatchObject({ code: expect.stringMatching(/^SQLITE_BUSY/) })
      other.exec('rollback')
      await locked.writes.transaction(insert(9))
      const rows = await locked.db
        .selectFrom('settings')
        .select('value')
        .where('name', 'like', 'write-queue-busy-%')
        .execute()
      expect(rows.map((row) => row.value)).toEqual(['busy-9'])
    })

    it('fails them after beginWaitMs instead, where the storage was opened with one', async () => {
      const short = sqliteOf(await createTestStorage({ catalog: false, busyTimeoutMs: 1000, beginWaitMs: 100 }))
      const held = new SQLite(short.readConnection!.name)
      held.exec('begin immediate')
      try {
        const started = performance.now()
        await expect(short.writes.transaction(insert(1))).rejects.toMatchObject({
          code: expect.stringMatching(/^SQLITE_BUSY/),
        })
        // Two seconds without the option (the test above).
        expect(performance.now() - started).toBeLessThan(1000)
      } finally {
        held.exec('rollback')
        held.close()
        await short.close()
      }
    })
  },
)
