/** The links mailed to accounts (verification, reset, change of address); only their tokens' hashes are kept. */
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import { bearerTokenHash, newBearerToken } from '../domain/bearer-token.js'
import type { AccountLinkPurpose, AccountLinkRow, Database } from './tables.js'

export interface NewAccountLink {
  accountId: string
  purpose: AccountLinkPurpose
  email: string
  lifetimeMs: number
}

/** Adds a link and returns its token, which goes in the mail and nowhere else. */
export async function insertAccountLink(db: Kysely<Database>, link: NewAccountLink, now: number): Promise<string> {
  const token = newBearerToken()
  await db
    .insertInto('account_links')
    .values({
      token_hash: bearerTokenHash(token),
      account_id: link.accountId,
      purpose: link.purpose,
      email: link.email,
      created_at: isoAt(now),
      expires_at: isoAt(now + link.lifetimeMs),
      used_at: null,
    })
    .execute()
  return token
}

/** How many links of `purpose` the account was sent since `since`. */
export async function countAccountLinksSince(
  db: Kysely<Database>,
  accountId: string,
  purpose: AccountLinkPurpose,
  since: number,
): Promise<number> {
  const row = await db
    .selectFrom('account_links')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('account_id', '=', accountId)
    .where('purpose', '=', purpose)
    .where('created_at', '>', isoAt(since))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export function findAccountLink(db: Kysely<Database>, token: string): Promise<AccountLinkRow | undefined> {
  return db.selectFrom('account_links').selectAll().where('token_hash', '=', bearerTokenHash(token)).executeTakeFirst()
}

/**
 * Marks the link used if it still can be (unused, unexpired, of this purpose): true for exactly
 * one of any number of concurrent callers.
 */
export async function useAccountLink(
  db: Kysely<Database>,
  token: string,
  purpose: AccountLinkPurpose,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('account_links')
    .set({ used_at: isoAt(now) })
    .where('token_hash', '=', bearerTokenHash(token))
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', isoAt(now))
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

/** Retires the account's unused links of these purposes (a reset, or a change of address, made them moot). */
export async function retireAccountLinks(
  db: Kysely<Database>,
  accountId: string,
  purposes: readonly AccountLinkPurpose[],
  now: number,
): Promise<void> {
  await db
    .updateTable('account_links')
    .set({ used_at: isoAt(now) })
    .where('account_id', '=', accountId)
    .where('purpose', 'in', purposes)
    .where('used_at', 'is', null)
    .execute()
}

/** Deletes links that expired before `before`: a used or dead link is worth keeping only to say so for a while. */
export async function deleteExpiredAccountLinks(db: Kysely<Database>, before: number): Promise<number> {
  const result = await db.deleteFrom('account_links').where('expires_at', '<', isoAt(before)).executeTakeFirst()
  return Number(result.numDeletedRows)
}
