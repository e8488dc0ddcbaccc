/**
 * Queries compiled once: each call's values land in the right places, constants of the query
 * stay, and the same query serves the plain connection, transactions and the write queue's
 * batches (where, on SQLite, it runs directly on the batch's connection).
 */
import { sql } from 'kysely'
import { beforeEach, describe, expect, it } from 'vitest'
import { preparedBySize, preparedQuery } from '../../src/storage/prepared-query.js'
import { createTestStorage } from '../helper.js'
import { perTest } from '../support/built.js'

describe('preparedQuery', () => {
  const storage = perTest(() => createTestStorage({ catalog: false }))
  beforeEach(async () => {
    await storage.db
      .insertInto('settings')
      .values([
        { name: 'p-alpha', value: 'one' },
        { name: 'p-beta', value: 'two' },
        { name: 'q-alpha', value: 'three' },
      ])
      .execute()
  })

  const byNameAndValue = preparedQuery((db, name: string, value: string) =>
    db
      .selectFrom('settings')
      .select('name')
      .where('name', 'like', 'p-%')
      .where('name', '=', name)
      .where('value', '=', value),
  )
  const insert = preparedQuery((db, name: string, value: string) => db.insertInto('settings').values({ value, name }))

  it('puts each call’s values in their places and keeps the query’s own constants', async () => {
    expect(await byNameAndValue(storage.db, 'p-alpha', 'one')).toEqual([{ name: 'p-alpha' }])
    expect(await byNameAndValue(storage.db, 'p-beta', 'two')).toEqual([{ name: 'p-beta' }])
    // The constant 'p-%' still applies: q-alpha matches name and value but not the pattern.
    expect(await byNameAndValue(storage.db, 'q-alpha', 'three')).toEqual([])
    expect(await byNameAndValue(storage.db, 'p-alpha', 'two')).toEqual([])
  })

  it('runs inside a transaction, and the transaction’s rollback undoes it', async () => {
    await storage.db
      .transaction()
      .execute(async (trx) => {
        await insert(trx, 'p-gamma', 'four')
        expect(await byNameAndValue(trx, 'p-gamma', 'four')).toEqual([{ name: 'p-gamma' }])
        throw new Error('roll back')
      })
      .catch(() => {})
    expect(await byNameAndValue(storage.db, 'p-gamma', 'four')).toEqual([])
    await insert(storage.db, 'p-gamma', 'four')
    expect(await byNameAndValue(storage.db, 'p-gamma', 'four')).toEqual([{ name: 'p-gamma' }])
  })

  const rename = preparedQuery((db, value: string, name: string) =>
    db.updateTable('settings').set({ value }).where('name', '=', name).returning(['name', 'value']),
  )

  it('answers inside a write-queue batch as it does outside: rows, nothing for a plain write, RETURNING rows', async () => {
    const outside = await byNameAndValue(storage.db, 'p-alpha', 'one')
    const inside = await storage.writes.transaction(async (trx) => {
      const found = await byNameAndValue(trx, 'p-alpha', 'one')
      const inserted = await insert(trx, 'p-delta', 'five')
      // The unit sees its own write, before the batch commits.
      const seen = await byNameAndValue(trx, 'p-delta', 'five')
      const returned = await rename(trx, 'six', 'p-delta')
      return { found, inserted, seen, returned }
    })
    expect(inside).toEqual({
      found: outside,
      inserted: [],
      seen: [{ name: 'p-delta' }],
      returned: [{ name: 'p-delta', value: 'six' }],
    })
    expect(await byNameAndValue(storage.db, 'p-delta', 'six')).toEqual([{ name: 'p-delta' }])
  })

  it('in a batch, a failing unit loses only its own writes, and the caller gets the database’s error', async () => {
    const units = await Promise.allSettled([
      storage.writes.transaction((trx) => insert(trx, 'p-one', 'a')),
      storage.writes.transaction(async (trx) => {
        await insert(trx, 'p-two', 'b')
        // The settings primary key: a second p-alpha fails after p-two was written.
        await insert(trx, 'p-alpha', 'again')
      }),
      storage.writes.transaction((trx) => insert(trx, 'p-three', 'c')),
    ])
    expect(units.map((unit) => unit.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect(String((units[1] as PromiseRejectedResult).reason)).toMatch(/unique|duplicate/i)
    expect(await byNameAndValue(storage.db, 'p-one', 'a')).toEqual([{ name: 'p-one' }])
    expect(await byNameAndValue(storage.db, 'p-two', 'b')).toEqual([])
    expect(await byNameAndValue(storage.db, 'p-three', 'c')).toEqual([{ name: 'p-three' }])
  })

  it.runIf(process.env.TEST_DATABASE_URL !== undefined)(
    'on PostgreSQL, is kept on the connection as a named statement, and other SQL is not',
    async () => {
      const kept = await storage.db.connection().execute(async (connection) => {
        await byNameAndValue(connection, 'p-alpha', 'one')
        await connection.selectFrom('settings').select('value').where('name', '=', 'p-beta').execute()
        return sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(connection)
      })
      const statements = kept.rows.map((row) => row.statement)
      expect(statements.some((text) => /"settings".*like/i.test(text))).toBe(true)
      expect(statements.some((text) => /select "value" from "settings"/i.test(text))).toBe(false)
    },
  )

  it('refuses a query where an argument does not become a parameter', async () => {
    const unused = preparedQuery((db, _name: string) => db.selectFrom('settings').select('name'))
    await expect(unused(storage.db, 'x')).rejects.toThrow('argument 0 does not become a query parameter')
  })

  it('prepares a multi-row statement once per row count, each count with its own arguments', async () => {
    let built = 0
    const insertRows = preparedBySize((size) => {
      built++
      return (db, ...args: string[]) =>
        db
          .insertInto('settings')
          .values(Array.from({ length: size }, (_, i) => ({ name: args[2 * i]!, value: args[2 * i + 1]! })))
    })
    expect(insertRows(2)).toBe(insertRows(2))
    await insertRows(2)(storage.db, 'r-one', '1', 'r-two', '2')
    await insertRows(1)(storage.db, 'r-three', '3')
    await insertRows(2)(storage.db, 'r-four', '4', 'r-five', '5')
    expect(built).toBe(2)
    const rows = await storage.db
      .selectFrom('settings')
      .select(['name', 'value'])
      .where('name', 'like', 'r-%')
      .execute()
    expect(new Map(rows.map((row) => [row.name, row.value]))).toEqual(
      new Map([
        ['r-one', '1'],
        ['r-two', '2'],
        ['r-three', '3'],
        ['r-four', '4'],
        ['r-five', '5'],
      ]),
    )
  })
})
