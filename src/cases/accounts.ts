/**
 * Dashboard accounts and their sessions: a partner signs up (never learning whether the address
 * had an account), an operator is created by the CLI only, and a session starts at sign-in and
 * ends at sign-out.
 */
import type { Kysely } from 'kysely'
import {
  createAccount,
  createAccountIfNew,
  createSession,
  deleteSession,
  type NewAccount,
} from '../storage/account-repository.js'
import type { AccountRow, Database } from '../storage/tables.js'

/** A partner's sign-up: the account unless the address has one already; true if it was created. */
export function signUp(db: Kysely<Database>, account: Omit<NewAccount, 'role'>, now: number): Promise<boolean> {
  return createAccountIfNew(db, { ...account, role: 'partner' }, now)
}

/** An operator account (`curriculum operator create`); ConflictError if the address has an account. */
export function createOperator(
  db: Kysely<Database>,
  account: Omit<NewAccount, 'role'>,
  now: number,
): Promise<AccountRow> {
  return createAccount(db, { ...account, role: 'operator' }, now)
}

/** A new session of the account; the token goes in the cookie and nowhere else. */
export function startSession(
  db: Kysely<Database>,
  accountId: string,
  now: number,
  lifetimeMs: number,
): Promise<string> {
  return createSession(db, accountId, now, lifetimeMs)
}

export function endSession(db: Kysely<Database>, token: string): Promise<void> {
  return deleteSession(db, token)
}
