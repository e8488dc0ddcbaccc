/**
 * Settings every instance must agree on, kept in the database: created once by whichever
 * instance needs it first, then read by all.
 */
import { randomBytes } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Database } from './tables.js'

/** A random secret under `name`, the same for every instance sharing the database. */
export async function sharedSecret(db: Kysely<Database>, name: string): Promise<Buffer> {
  await db
    .insertInto('settings')
    .values({ name, value: randomBytes(32).toString('base64url') })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute()
  const row = await db.selectFrom('settings').select('value').where('name', '=', name).executeTakeFirstOrThrow()
  return Buffer.from(row.value, 'base64url')
}
