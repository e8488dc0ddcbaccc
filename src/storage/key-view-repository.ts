/**
 * One-time views of new keys: a sealed (encrypted) key, whose account may read it until it
 * expires (cases/key-views.ts deletes expired rows, anyone's, whenever a view is added or read).
 */
import { createHash } from 'node:crypto'
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import type { Database, KeyViewRow } from './tables.js'

/** The row id for a view token: only its SHA-256 is stored, like a session token's. */
export function keyViewId(viewToken: string): string {
  return createHash('sha256').update(viewToken).digest('hex')
}

/** Deletes every view whose time is up. */
export async function deleteExpiredKeyViews(db: Kysely<Database>, now: number): Promise<void> {
  await db.deleteFrom('key_views').where('expires_at', '<=', isoAt(now)).execute()
}

export async function insertKeyView(db: Kysely<Database>, row: KeyViewRow): Promise<void> {
  await db.insertInto('key_views').values(row).execute()
}

/** The account's view for this token, or undefined (none, or another account's). */
export function keyViewOf(db: Kysely<Database>, viewToken: string, accountId: string): Promise<KeyViewRow | undefined> {
  return db
    .selectFrom('key_views')
    .selectAll()
    .where('id', '=', keyViewId(viewToken))
    .where('account_id', '=', accountId)
    .executeTakeFirst()
}

export async function deleteKeyView(db: Kysely<Database>, viewToken: string, accountId: string): Promise<void> {
  await db.deleteFrom('key_views').where('id', '=', keyViewId(viewToken)).where('account_id', '=', accountId).execute()
}
