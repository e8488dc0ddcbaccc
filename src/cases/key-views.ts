/**
 * The rows behind a new key's one-time page (dashboard/key-views.ts seals and opens them):
 * expired rows, anyone's, are deleted whenever a view is added or read, so none outlives its
 * window by long.
 */
import type { Kysely } from 'kysely'
import { deleteExpiredKeyViews, deleteKeyView, insertKeyView, keyViewOf } from '../storage/key-view-repository.js'
import type { Database, KeyViewRow } from '../storage/tables.js'

export async function addKeyView(db: Kysely<Database>, row: KeyViewRow, now: number): Promise<void> {
  await deleteExpiredKeyViews(db, now)
  await insertKeyView(db, row)
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
  await deleteExpiredKeyViews(db, now)
  return keyViewOf(db, viewToken, accountId)
}

/** Forgets the view now (the partner has copied the key). */
export function hideKeyView(db: Kysely<Database>, viewToken: string, accountId: string): Promise<void> {
  return deleteKeyView(db, viewToken, accountId)
}
