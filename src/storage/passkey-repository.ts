/** An account's passkeys (migration 0019) and the WebAuthn challenges already used (migration 0025). */
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import { bearerTokenHash } from '../domain/bearer-token.js'
import type { Database, PasskeyRow } from './tables.js'

export interface NewPasskey {
  id: string
  accountId: string
  name: string
  publicKey: string
  counter: number
  transports: string | null
}

/** Adds the passkey; false when a passkey with this credential id exists already. */
export async function insertPasskey(db: Kysely<Database>, passkey: NewPasskey, now: number): Promise<boolean> {
  const result = await db
    .insertInto('passkeys')
    .values({
      id: passkey.id,
      account_id: passkey.accountId,
      name: passkey.name,
      public_key: passkey.publicKey,
      counter: passkey.counter,
      transports: passkey.transports,
      created_at: isoAt(now),
      last_used_at: null,
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .executeTakeFirst()
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1
}

/** The account's passkeys, oldest first; PostgreSQL's bigint counter read as a number. */
export async function passkeysOf(db: Kysely<Database>, accountId: string): Promise<PasskeyRow[]> {
  const rows = await db
    .selectFrom('passkeys')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('id')
    .execute()
  return rows.map((row) => ({ ...row, counter: Number(row.counter) }))
}

export async function findPasskey(db: Kysely<Database>, id: string): Promise<PasskeyRow | undefined> {
  const row = await db.selectFrom('passkeys').selectAll().where('id', '=', id).executeTakeFirst()
  return row === undefined ? undefined : { ...row, counter: Number(row.counter) }
}

/**
 * Records a use: the new signature counter, if the stored one is still `seen` (so two uses
 * racing with one counter value cannot both pass); false otherwise.
 */
export async function recordPasskeyUse(
  db: Kysely<Database>,
  use: { id: string; seen: number; counter: number },
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('passkeys')
    .set({ counter: use.counter, last_used_at: isoAt(now) })
    .where('id', '=', use.id)
    .where('counter', '=', use.seen)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

export async function deletePasskey(db: Kysely<Database>, accountId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('passkeys')
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst()
  return Number(result.numDeletedRows) === 1
}

export async function countPasskeys(db: Kysely<Database>, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('passkeys')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Records the challenge as used; false when it was used already (its row exists). */
export async function spendChallenge(db: Kysely<Database>, challenge: string, expiresAt: number): Promise<boolean> {
  const result = await db
    .insertInto('passkey_challenges_used')
    .values({ challenge_hash: bearerTokenHash(challenge), expires_at: isoAt(expiresAt) })
    .onConflict((oc) => oc.column('challenge_hash').doNothing())
    .executeTakeFirst()
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1
}

export async function deleteExpiredChallenges(db: Kysely<Database>, now: number): Promise<void> {
  await db.deleteFrom('passkey_challenges_used').where('expires_at', '<', isoAt(now)).execute()
}

/** Removes every passkey of the account (a lost device's reset); how many there were. */
export async function deletePasskeysOf(db: Kysely<Database>, accountId: string): Promise<number> {
  const result = await db.deleteFrom('passkeys').where('account_id', '=', accountId).executeTakeFirst()
  return Number(result.numDeletedRows)
}
