/**
 * Settings every instance must agree on, kept in the database (cases/shared-settings.ts: the
 * first instance to need one stores it, all read it).
 */
import type { Kysely } from 'kysely'
import type { Database } from './tables.js'

/** Stores `value` under `name` unless a value is stored there already. */
export async function insertSettingIfAbsent(db: Kysely<Database>, name: string, value: string): Promise<void> {
  await db
    .insertInto('settings')
    .values({ name, value })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute()
}

export async function settingValue(db: Kysely<Database>, name: string): Promise<string> {
  const row = await db.selectFrom('settings').select('value').where('name', '=', name).executeTakeFirstOrThrow()
  return row.value
}
