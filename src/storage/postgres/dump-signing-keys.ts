/**
 * The certificate signing keys a pg_restore of a dump would take away. pg_restore replaces the
 * settings table with the dump's, so a key the database has and the dump lacks (one made after the
 * dump was taken) would go, and the certificates of deletion it signed would stop verifying;
 * `restore` names those keys and gives the commands that keep the database's settings.
 */
import { signingKeyFrom } from '../../domain/signing-key.js'
import {
  EARLIER_SIGNING_KEY_PREFIX,
  isSigningKeyRow,
  SIGNING_KEY_SETTING,
  type SettingRow,
  signingKeysToCarry,
} from '../signing-key-repository.js'
import { dumpedRows } from './client-tools.js'
import { openPostgres } from './open-postgres.js'

/** The database's signing key rows; none when it has no settings table yet. */
async function liveRows(databaseUrl: string): Promise<SettingRow[]> {
  const storage = openPostgres(databaseUrl, { poolSize: 1 })
  try {
    return await storage.db
      .selectFrom('settings')
      .select(['name', 'value'])
      .where((eb) =>
        eb.or([eb('name', '=', SIGNING_KEY_SETTING), eb('name', 'like', `${EARLIER_SIGNING_KEY_PREFIX}%`)]),
      )
      .execute()
  } catch (error) {
    // 42P01: undefined_table, a database not migrated yet.
    if ((error as { code?: string }).code === '42P01') return []
    throw error
  } finally {
    await storage.close()
  }
}

function kidOf(row: SettingRow): string {
  if (row.name !== SIGNING_KEY_SETTING) return row.name.slice(EARLIER_SIGNING_KEY_PREFIX.length)
  try {
    return signingKeyFrom(row.value).publicJwk.kid
  } catch {
    return 'a stored value that is no key'
  }
}

/**
 * The ids (`kid`) of the keys `databaseUrl`'s database has and restoring the dump `file` (checked
 * already: its tables are in `schema`) would lose.
 */
export async function signingKeysLost(file: string, schema: string, databaseUrl: string): Promise<string[]> {
  const copy = `COPY ${schema}.settings (name, value) FROM stdin;\n`
  const dumped = (await dumpedRows(file, schema, 'settings', copy))
    .map(([name, value]) => ({ name: name!, value: value ?? '' }))
    .filter((row) => isSigningKeyRow(row.name))
  const live = await liveRows(databaseUrl)
  return signingKeysToCarry(live, dumped)
    .filter((row) => live.some((kept) => kept.name === row.name && kept.value === row.value))
    .map(kidOf)
}
