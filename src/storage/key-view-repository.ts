/**
 * One-time views of new keys: a sealed (encrypted) key, whose account may read it until it
 * expires. Expired rows are deleted whenever a view is added or found expired.
 */
import { createHash } from 'node:crypto'
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import type { Database, KeyViewRow } from './database.js'

/** The row id for a view token: only its SHA-256 is stored, like a session token's. */
export function keyViewId(viewToken: string): string {
  return createHash('sha256').update(viewToken).digest('hex')
}

export async function addKeyView(db: Kysely<Database>, row: KeyViewRow, now: number): Promise<void> {
  await db.deleteFrom('key_views').where('expires_at', '<=', isoAt(now)).execute()
  await db.insertInto('key_views').values(row).execute()
}

/** The account's live view for this token, or undefined (none, another account's, or expired and now deleted). */
export async function findKeyView(db: Kysely<Database>, viewToken: string, accountId: string, now: number): Promise<KeyViewRow | undefined> {
  const row = await db.selectFrom('key_views').selectAll().where('id', '=', keyViewId(viewToken)).where('account_id', '=', accountId).executeTakeFirst()
  if (row === undefined) return undefined
  if (row.expires_at <= isoAt(now)) {
    await deleteKeyView(db, viewToken, accountId)
    return undefined
  }
  return row
}

export async function deleteKeyView(db: Kysely<Database>, viewToken: string, accountId: string): Promise<void> {
  await db.deleteFrom('key_views').where('id', '=', keyViewId(viewToken)).where('account_id', '=', accountId).execute()
}
