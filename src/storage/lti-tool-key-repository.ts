/**
 * Where the tool's LTI keys are kept: the key in use under one settings row (its private half,
 * like the certificate signing key), and each retired key under a row of its own holding its
 * public half and the time until which it stays published, so that a platform holding a token
 * signed just before a rotation can still check it.
 */
import type { Kysely } from 'kysely'
import { type ToolPublicJwk, toolPublicJwk } from '../domain/lti-tool-key.js'
import type { Database } from './tables.js'

/** The settings row of the key in use: its PKCS #8 encoding, base64url. */
export const TOOL_KEY_SETTING = 'lti-tool-key'
/** A retired key's row is named this and its `kid`; it holds `{ n, e, until }`. */
export const RETIRED_TOOL_KEY_PREFIX = `${TOOL_KEY_SETTING}-retired:`

export interface RetiredToolKey {
  jwk: ToolPublicJwk
  /** ISO 8601: the key is published until then. */
  until: string
}

/** The retired keys still published at `nowIso`, newest retirement last. */
export async function retiredToolKeys(db: Kysely<Database>, nowIso: string): Promise<RetiredToolKey[]> {
  const rows = await db
    .selectFrom('settings')
    .select('value')
    .where('name', 'like', `${RETIRED_TOOL_KEY_PREFIX}%`)
    .execute()
  const keys: RetiredToolKey[] = []
  for (const row of rows) {
    const value = retiredValue(row.value)
    if (value !== undefined && value.until > nowIso)
      keys.push({ jwk: toolPublicJwk(value.n, value.e), until: value.until })
  }
  return keys.sort((a, b) => a.until.localeCompare(b.until))
}

function retiredValue(text: string): { n: string; e: string; until: string } | undefined {
  try {
    const value = JSON.parse(text) as { n?: unknown; e?: unknown; until?: unknown }
    if (typeof value.n === 'string' && typeof value.e === 'string' && typeof value.until === 'string')
      return { n: value.n, e: value.e, until: value.until }
  } catch {}
  return undefined
}

/** Replaces the key in use with `next` if it is still `current`; false when another rotation came first. */
export async function replaceToolKey(
  trx: Kysely<Database>,
  current: string,
  next: string,
  retired: { kid: string; n: string; e: string; until: string },
): Promise<boolean> {
  const result = await trx
    .updateTable('settings')
    .set({ value: next })
    .where('name', '=', TOOL_KEY_SETTING)
    .where('value', '=', current)
    .executeTakeFirst()
  if (Number(result.numUpdatedRows) !== 1) return false
  const value = JSON.stringify({ n: retired.n, e: retired.e, until: retired.until })
  await trx
    .insertInto('settings')
    .values({ name: `${RETIRED_TOOL_KEY_PREFIX}${retired.kid}`, value })
    .onConflict((oc) => oc.column('name').doUpdateSet({ value }))
    .execute()
  return true
}

/** Drops retired keys whose publication ended before `nowIso`. */
export async function pruneRetiredToolKeys(db: Kysely<Database>, nowIso: string): Promise<void> {
  const rows = await db
    .selectFrom('settings')
    .select(['name', 'value'])
    .where('name', 'like', `${RETIRED_TOOL_KEY_PREFIX}%`)
    .execute()
  const ended = rows.filter((row) => (retiredValue(row.value)?.until ?? '') <= nowIso).map((row) => row.name)
  if (ended.length > 0) await db.deleteFrom('settings').where('name', 'in', ended).execute()
}
