/**
 * The certificate signing keys a restore keeps. A certificate of deletion handed to a district
 * must verify for as long as the district keeps it, so a restore never loses a key: those of the
 * replaced database are written into the restored one (signing-key-repository.ts says which). Unlike
 * the history (restore-history.ts), this is done whether or not the replaced database is a later
 * state of the backup: the keys are the service's, and whatever it signed must still verify.
 */
import type SQLite from 'better-sqlite3'
import {
  EARLIER_SIGNING_KEY_PREFIX,
  SIGNING_KEY_SETTING,
  type SettingRow,
  signingKeysToCarry,
} from '../signing-key-repository.js'

export type CarriedSigningKeys = { written: number } | { notCarried: string }

function signingKeyRows(copy: SQLite.Database, schema: 'main' | 'replaced'): SettingRow[] {
  const table = copy.prepare(`select 1 from ${schema}.sqlite_master where type = 'table' and name = 'settings'`).get()
  if (table === undefined) return []
  return copy
    .prepare(`select name, value from ${schema}.settings where name = ? or substr(name, 1, ?) = ?`)
    .all(SIGNING_KEY_SETTING, EARLIER_SIGNING_KEY_PREFIX.length, EARLIER_SIGNING_KEY_PREFIX) as SettingRow[]
}

/**
 * Writes into `copy` (the restored database, open for writing) the signing keys the database file
 * `replaced` has and `copy` lacks; says how many rows it wrote, or why it could not.
 */
export function carrySigningKeys(copy: SQLite.Database, replaced: string): CarriedSigningKeys {
  try {
    copy.prepare('attach database ? as replaced').run(replaced)
  } catch (error) {
    return { notCarried: `the replaced database cannot be read (${(error as Error).message})` }
  }
  try {
    const writes = signingKeysToCarry(signingKeyRows(copy, 'replaced'), signingKeyRows(copy, 'main'))
    if (writes.length === 0) return { written: 0 }
    // Before migration 0002 there is no settings table; the backup would come back without keys.
    if (copy.prepare(`select 1 from main.sqlite_master where type = 'table' and name = 'settings'`).get() === undefined)
      return { notCarried: 'the backup is older than the settings table (migration 0002-dashboard)' }
    const upsert = copy.prepare(
      'insert into main.settings (name, value) values (@name, @value) ' +
        'on conflict (name) do update set value = excluded.value',
    )
    copy.transaction(() => {
      for (const row of writes) upsert.run(row)
    })()
    return { written: writes.length }
  } catch (error) {
    return { notCarried: `the replaced database's keys could not be read (${(error as Error).message})` }
  } finally {
    copy.exec('detach database replaced')
  }
}
