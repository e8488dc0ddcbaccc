/**
 * Second factors' queries (the rules are cases/second-factor.ts's): an account's TOTP
 * authenticator, its recovery codes and the count of its refused codes. Every write that a
 * concurrent request could race is one conditional statement: it states what must still be true
 * and reports whether it was.
 */
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import type { Database, TotpFactorRow } from './tables.js'

type Db = Kysely<Database>

/** A row as read: numbers as numbers whatever the engine's driver gives. */
function totpRow(row: TotpFactorRow): TotpFactorRow {
  return { ...row, last_used_step: row.last_used_step === null ? null : Number(row.last_used_step) }
}

export async function findTotpFactor(db: Db, accountId: string): Promise<TotpFactorRow | undefined> {
  const row = await db.selectFrom('totp_factors').selectAll().where('account_id', '=', accountId).executeTakeFirst()
  return row === undefined ? undefined : totpRow(row)
}

/**
 * Stores a pending authenticator with `secret` (sealed), replacing a pending one; resolves to
 * false, writing nothing, when the account has a confirmed one.
 */
export async function putPendingTotp(db: Db, accountId: string, secret: string, now: number): Promise<boolean> {
  const created_at = isoAt(now)
  const result = await db
    .insertInto('totp_factors')
    .values({ account_id: accountId, secret, created_at, confirmed_at: null, last_used_step: null })
    .onConflict((oc) =>
      oc
        .column('account_id')
        .doUpdateSet({ secret, created_at, last_used_step: null })
        .where('totp_factors.confirmed_at', 'is', null),
    )
    .executeTakeFirst()
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1
}

/**
 * Confirms the pending authenticator whose sealed secret is still `secret` (not replaced by
 * another enrolment meanwhile), recording `step` as used; resolves to whether it did.
 */
export async function confirmPendingTotp(
  db: Db,
  accountId: string,
  secret: string,
  step: number,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('totp_factors')
    .set({ confirmed_at: isoAt(now), last_used_step: step })
    .where('account_id', '=', accountId)
    .where('secret', '=', secret)
    .where('confirmed_at', 'is', null)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

/**
 * Records `step` as the last one used, if the confirmed authenticator has used none as late:
 * of two requests with the same code, the one that writes second finds the condition false.
 */
export async function advanceTotpStep(db: Db, accountId: string, step: number): Promise<boolean> {
  const result = await db
    .updateTable('totp_factors')
    .set({ last_used_step: step })
    .where('account_id', '=', accountId)
    .where('confirmed_at', 'is not', null)
    .where((eb) => eb.or([eb('last_used_step', 'is', null), eb('last_used_step', '<', step)]))
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

/** Deletes the account's authenticator, pending or confirmed; resolves to the row deleted. */
export async function deleteTotpFactor(db: Db, accountId: string): Promise<TotpFactorRow | undefined> {
  const row = await db.deleteFrom('totp_factors').where('account_id', '=', accountId).returningAll().executeTakeFirst()
  return row === undefined ? undefined : totpRow(row)
}

/** Replaces every recovery code of the account, used or not, with `hashes`. */
export async function replaceRecoveryCodes(db: Db, accountId: string, hashes: string[], now: number): Promise<void> {
  await db.deleteFrom('recovery_codes').where('account_id', '=', accountId).execute()
  const created_at = isoAt(now)
  await db
    .insertInto('recovery_codes')
    .values(hashes.map((code_hash) => ({ account_id: accountId, code_hash, created_at, used_at: null })))
    .execute()
}

/** Marks the unused code `hash` used; resolves to whether this call did (a code is used once). */
export async function useRecoveryCode(db: Db, accountId: string, hash: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('recovery_codes')
    .set({ used_at: isoAt(now) })
    .where('account_id', '=', accountId)
    .where('code_hash', '=', hash)
    .where('used_at', 'is', null)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

export async function countUnusedRecoveryCodes(db: Db, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('recovery_codes')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('account_id', '=', accountId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export async function deleteRecoveryCodes(db: Db, accountId: string): Promise<number> {
  const result = await db.deleteFrom('recovery_codes').where('account_id', '=', accountId).executeTakeFirst()
  return Number(result.numDeletedRows)
}

export interface GuessLimit {
  /** Refused codes allowed in one window. */
  limit: number
  /** How long a window lasts from its start (ms). */
  windowMs: number
}

export interface GuessWindow {
  /** Codes counted in the window, this one included. */
  failures: number
  windowStartedAt: number
}

/**
 * Counts one more code against the account before it is checked, in one statement: a window
 * that ran out starts again at `now` with this code; otherwise the count goes up while it is under
 * the limit. Resolves to the window as it now is, or undefined when the limit is reached and the
 * code must not be checked. Concurrent calls each see the others' counts (PostgreSQL evaluates
 * the condition again on the row as the earlier writer left it; SQLite writes one at a time).
 */
export async function reserveGuess(
  db: Db,
  accountId: string,
  now: number,
  { limit, windowMs }: GuessLimit,
): Promise<GuessWindow | undefined> {
  const at = isoAt(now)
  const expired = isoAt(now - windowMs)
  await db
    .insertInto('second_factor_guesses')
    .values({ account_id: accountId, window_started_at: at, failures: 0 })
    .onConflict((oc) => oc.column('account_id').doNothing())
    .execute()
  const row = await db
    .updateTable('second_factor_guesses')
    .set((eb) => ({
      failures: eb
        .case()
        .when('window_started_at', '<=', expired)
        .then(1)
        .else(eb('failures', '+', 1))
        .end(),
      window_started_at: eb
        .case()
        .when('window_started_at', '<=', expired)
        .then(at)
        .else(eb.ref('window_started_at'))
        .end(),
    }))
    .where('account_id', '=', accountId)
    .where((eb) => eb.or([eb('window_started_at', '<=', expired), eb('failures', '<', limit)]))
    .returning(['failures', 'window_started_at'])
    .executeTakeFirst()
  return row === undefined
    ? undefined
    : { failures: Number(row.failures), windowStartedAt: Date.parse(row.window_started_at) }
}

/** Takes back a code counted by `reserveGuess` that turned out right: only refused codes count. */
export async function releaseGuess(db: Db, accountId: string): Promise<void> {
  await db
    .updateTable('second_factor_guesses')
    .set((eb) => ({ failures: eb('failures', '-', 1) }))
    .where('account_id', '=', accountId)
    .where('failures', '>', 0)
    .execute()
}

/** The account's current window, if it has had one. */
export async function findGuessWindow(db: Db, accountId: string): Promise<GuessWindow | undefined> {
  const row = await db
    .selectFrom('second_factor_guesses')
    .select(['failures', 'window_started_at'])
    .where('account_id', '=', accountId)
    .executeTakeFirst()
  return row === undefined
    ? undefined
    : { failures: Number(row.failures), windowStartedAt: Date.parse(row.window_started_at) }
}

export async function deleteGuesses(db: Db, accountId: string): Promise<void> {
  await db.deleteFrom('second_factor_guesses').where('account_id', '=', accountId).execute()
}
