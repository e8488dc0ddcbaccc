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
  findAccountByEmail,
  type NewAccount,
  type SessionOrigin,
  touchSession,
} from '../storage/account-repository.js'
import { countMailTo } from '../storage/mail-outbox-repository.js'
import type { AccountRow, Database, SessionRow } from '../storage/tables.js'
import { signUpAgainMail } from './account-mail.js'
import { sendVerificationLink } from './email-verification.js'
import { type HeldMailNotice, queueMail } from './mail.js'
import { forgotPasswordPage } from './password-reset.js'

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

/**
 * A new session of the account; the token goes in the cookie and nowhere else. `pending`: the
 * password was right, and the session waits for the second factor's code.
 */
export function startSession(
  db: Kysely<Database>,
  accountId: string,
  origin: SessionOrigin,
  now: number,
  lifetimeMs: number,
  pending = false,
): Promise<{ token: string; id: string }> {
  return createSession(db, accountId, origin, now, lifetimeMs, pending)
}

/** A session's last use is kept to the minute: a page view writes it only after a minute or from a new address. */
export const SESSION_USE_PRECISION_MS = 60_000

/** Records that the session was used now from `origin`, unless its record is recent and from the same place. */
export async function recordSessionUse(
  db: Kysely<Database>,
  session: SessionRow,
  origin: SessionOrigin,
  now: number,
): Promise<void> {
  const last = session.last_used_at === null ? 0 : Date.parse(session.last_used_at)
  if (now - last < SESSION_USE_PRECISION_MS && session.last_address === origin.address) return
  await touchSession(db, session.token_hash, origin, now)
}

export function endSession(db: Kysely<Database>, token: string): Promise<void> {
  return deleteSession(db, token)
}

/** An address that has an account is told of another sign-up with it at most this often a day. */
export const SIGN_UP_AGAIN_NOTICES_PER_DAY = 3

/**
 * The mail a sign-up sends, after it has been answered: a new account gets its verification link;
 * an address that had an account already is told so (with where to sign in or reset), since the
 * page said nothing either way.
 */
export async function mailAfterSignUp(
  db: Kysely<Database>,
  signUp: { email: string; created: boolean; publicUrl: string },
  now: number,
  held?: HeldMailNotice,
): Promise<void> {
  const account = await findAccountByEmail(db, signUp.email)
  if (account === undefined) return
  if (signUp.created) {
    await sendVerificationLink(db, account.id, signUp.publicUrl, now, held)
    return
  }
  if ((await countMailTo(db, account.email, 'sign-up-again', now - 86_400_000)) >= SIGN_UP_AGAIN_NOTICES_PER_DAY) return
  const mail = signUpAgainMail(
    account.email,
    `${signUp.publicUrl}/dashboard/login`,
    forgotPasswordPage(signUp.publicUrl),
  )
  await queueMail(db, mail, now, held)
}
