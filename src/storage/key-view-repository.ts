/**
 * One-time views of new keys: a sealed (encrypted) key, whose account may read it until it
 * expires. Expired rows, anyone's, are deleted whenever a view is added or read.
 */
import { createHash } from 'node:crypto'
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import type { Database, KeyViewRow } from './tables.js'

/** The row id for a view token: only its SHA-256 is stored, like a session token's. */
export function keyViewId(viewToken: string): string {
  return createHash('sha256').update(viewToken).digest('hex')
}

/** Deletes every view whose time is up; run on each add and each read, so none outlives its window by long. */
async function deleteExpired(db: Kysely<Database>, now: number): Promise<void> {
  await db.deleteFrom('key_views').where('expires_at', '<=', isoAt(now)).execute()
}

export async function addKeyView(db: Kysely<Database>, row: KeyViewRow, now: number): Promise<void> {
  await deleteExpired(db, now)
  await db.insertInto('key_views').values(row).execute()
}

/**
 * The account's view for this token while its time is not up, or undefined (none, another
 * account's, or expired and now deleted).
 */
export async function findKeyView(
  db: Kysely<Database>,
  viewToken: string,
  accountId: string,
  now: number,
): Promise<KeyViewRow | undefined> {
  await deleteExpired(db, now)
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
