/**
 * Where the keys that sign certificates of deletion are kept: the key in use under one settings
 * row (its private half), and every earlier key under a row of its own (its public half only,
 * which is all that checking a certificate needs). An earlier key comes from a restore: the
 * database restored keeps the replaced one's key in use, and the key the backup held is kept
 * beside it, so that every certificate either ever signed still verifies.
 */
import type { Kysely } from 'kysely'
import { type PublicJwk, publicJwkOf, signingKeyFrom } from '../domain/signing-key.js'
import type { Database } from './tables.js'

/** The settings row of the key in use: its PKCS #8 encoding, base64url. */
export const SIGNING_KEY_SETTING = 'certificate-signing-key'
/** An earlier key's row is named this and its `kid`, and holds its public key `x`. */
export const EARLIER_SIGNING_KEY_PREFIX = `${SIGNING_KEY_SETTING}:`

export interface SettingRow {
  name: string
  value: string
}

export function isSigningKeyRow(name: string): boolean {
  return name === SIGNING_KEY_SETTING || name.startsWith(EARLIER_SIGNING_KEY_PREFIX)
}

/** The earlier keys, as published; a row that is no Ed25519 public key is left out. */
export async function earlierSigningKeys(db: Kysely<Database>): Promise<PublicJwk[]> {
  const rows = await db
    .selectFrom('settings')
    .select('value')
    .where('name', 'like', `${EARLIER_SIGNING_KEY_PREFIX}%`)
    .orderBy('name')
    .execute()
  return rows.filter((row) => ED25519_X.test(row.value)).map((row) => publicJwkOf(row.value))
}

/** An Ed25519 public key in base64url: 32 bytes. */
const ED25519_X = /^[A-Za-z0-9_-]{43}$/

/** The earlier key row of the private key `text`, or undefined when it is none this service made. */
function earlierRowOf(text: string): SettingRow | undefined {
  try {
    const { x, kid } = signingKeyFrom(text).publicJwk
    return { name: `${EARLIER_SIGNING_KEY_PREFIX}${kid}`, value: x }
  } catch {
    return undefined
  }
}

/**
 * The signing key rows to write into a restored database (`restored`'s rows) so that it keeps
 * every key of the database it replaces (`replaced`'s rows): the replaced database's key in use
 * stays in use (its certificates are the newest, and partners hold its key set), each earlier key
 * it has and the restored one lacks is added, and the restored database's own key, when another,
 * becomes an earlier key.
 */
export function signingKeysToCarry(replaced: readonly SettingRow[], restored: readonly SettingRow[]): SettingRow[] {
  const has = new Set(restored.map((row) => row.name))
  const writes = replaced.filter((row) => row.name.startsWith(EARLIER_SIGNING_KEY_PREFIX) && !has.has(row.name))
  const inUse = replaced.find((row) => row.name === SIGNING_KEY_SETTING)
  const own = restored.find((row) => row.name === SIGNING_KEY_SETTING)
  if (inUse === undefined || inUse.value === own?.value) return writes
  writes.push(inUse)
  // A stored value that is no key of ours signed nothing, and is simply replaced.
  const retired = own === undefined ? undefined : earlierRowOf(own.value)
  if (retired !== undefined && !has.has(retired.name) && !writes.some((row) => row.name === retired.name))
    writes.push(retired)
  return writes
}
