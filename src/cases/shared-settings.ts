/**
 * Settings every instance must agree on, kept in the database: created once by whichever
 * instance needs it first, then read by all.
 */
import { randomBytes } from 'node:crypto'
import type { Kysely } from 'kysely'
import { insertSettingIfAbsent, settingValue } from '../storage/settings-repository.js'
import type { Database } from '../storage/tables.js'

/** The value under `name`: `initial` if no instance has stored one yet, else the stored one. */
export async function sharedValue(db: Kysely<Database>, name: string, initial: string): Promise<string> {
  await insertSettingIfAbsent(db, name, initial)
  return settingValue(db, name)
}

/** A random secret under `name`, the same for every instance sharing the database. */
export async function sharedSecret(db: Kysely<Database>, name: string): Promise<Buffer> {
  return Buffer.from(await sharedValue(db, name, randomBytes(32).toString('base64url')), 'base64url')
}
