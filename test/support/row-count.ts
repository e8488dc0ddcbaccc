/** What the tests count after an import, an erasure or a purge: the rows a table holds. */
import type { Kysely } from 'kysely'
import type { Database } from '../../src/storage/tables.js'

export async function rowCount(db: Kysely<Database>, table: keyof Database): Promise<number> {
  const row = await db
    .selectFrom(table as 'students')
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}
