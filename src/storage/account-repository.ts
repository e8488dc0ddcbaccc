/**
 * Dashboard accounts (partners sign up; operators are created with the CLI) and their
 * sessions. A session cookie carries a random token; only its SHA-256 is stored (domain/bearer-token.ts).
 */
import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import { bearerTokenHash, newBearerToken } from '../domain/bearer-token.js'
import { ConflictError } from '../domain/errors.js'
import type { OperatorRole } from '../domain/operator-roles.js'
import type { AccountRow, Database, SessionRow } from './tables.js'

export type Role = 'partner' | 'operator'

export interface NewAccount {
  email: string
  passwordHash: string
  role: Role
  sandboxOrganisationId?: string | null
  /** An operator account's role (an admin unless said); partners have none. */
  operatorRole?: OperatorRole
}

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase()
}

export async function createAccount(db: Kysely<Database>, account: NewAccount, now: number): Promise<AccountRow> {
  const email = normaliseEmail(account.email)
  const existing = await db.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirst()
  if (existing !== undefined) throw new ConflictError(`an account with the e-mail address ${email} already exists`)
  const row: AccountRow = {
    id: randomUUID(),
    email,
    password_hash: account.passwordHash,
    role: account.role,
    organisation_id: null,
    sandbox_organisation_id: account.sandboxOrganisationId ?? null,
    created_at: isoAt(now),
    email_verified_at: null,
    operator_role: account.role === 'operator' ? (account.operatorRole ?? 'admin') : null,
  }
  await db.insertInto('accounts').values(row).execute()
  return row
}

/**
 * Creates the account unless one has this e-mail address already; true if it did. Both ways
 * do the same work (one insert statement), so sign-up takes as long for an address that has an
 * account as for a new one.
 */
export async function createAccountIfNew(db: Kysely<Database>, account: NewAccount, now: number): Promise<boolean> {
  const result = await db
    .insertInto('accounts')
    .values({
      id: randomUUID(),
      email: normaliseEmail(account.email),
      password_hash: account.passwordHash,
      role: account.role,
      organisation_id: null,
      sandbox_organisation_id: account.sandboxOrganisationId ?? null,
      created_at: isoAt(now),
      email_verified_at: null,
    })
    .onConflict((oc) => oc.column('email').doNothing())
    .executeTakeFirst()
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1
}

/** Gives the account its sandbox unless it has one; false if it had one already. */
export async function setSandboxIfNone(
  db: Kysely<Database>,
  accountId: string,
  sandboxOrganisationId: string,
): Promise<boolean> {
  const result = await db
    .updateTable('accounts')
    .set({ sandbox_organisation_id: sandboxOrganisationId })
    .where('id', '=', accountId)
    .where('sandbox_organisation_id', 'is', null)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

/** Links the account to its organisation (its application was approved). */
export async function setAccountOrganisation(
  db: Kysely<Database>,
  accountId: string,
  organisationId: string,
): Promise<void> {
  await db.updateTable('accounts').set({ organisation_id: organisationId }).where('id', '=', accountId).execute()
}

export async function findAccountByEmail(db: Kysely<Database>, email: string): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').selectAll().where('email', '=', normaliseEmail(email)).executeTakeFirst()
}

export async function findAccount(db: Kysely<Database>, id: string): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst()
}

export async function accountEmails(db: Kysely<Database>): Promise<Map<string, string>> {
  const rows = await db.selectFrom('accounts').select(['id', 'email']).execute()
  return new Map(rows.map((row) => [row.id, row.email]))
}

export async function accountsOf(
  db: Kysely<Database>,
  organisationId: string,
): Promise<{ email: string; created_at: string }[]> {
  return db
    .selectFrom('accounts')
    .select(['email', 'created_at'])
    .where('organisation_id', '=', organisationId)
    .execute()
}

/** Who opened a session, as the Account page shows it. */
export interface SessionOrigin {
  address: string
  userAgent: string | null
}

/** A User-Agent is kept to this many characters: enough to tell browsers apart, no more. */
const USER_AGENT_KEPT = 256

/** A new session: its token goes in the cookie and nowhere else; its id names it on the Account page. */
export async function createSession(
  db: Kysely<Database>,
  accountId: string,
  origin: SessionOrigin,
  now: number,
  lifetimeMs: number,
  pending = false,
): Promise<{ token: string; id: string }> {
  const token = newBearerToken()
  const id = randomUUID()
  await db
    .insertInto('sessions')
    .values({
      token_hash: bearerTokenHash(token),
      account_id: accountId,
      created_at: isoAt(now),
      expires_at: isoAt(now + lifetimeMs),
      id,
      last_used_at: isoAt(now),
      last_address: origin.address,
      user_agent: origin.userAgent?.slice(0, USER_AGENT_KEPT) ?? null,
      second_factor_pending: pending ? 1 : 0,
    })
    .execute()
  return { token, id }
}

export interface LiveSession {
  account: AccountRow
  session: SessionRow
}

/** The account and session behind a live session token, or undefined. */
export async function accountForSession(
  db: Kysely<Database>,
  token: string,
  now: number,
): Promise<LiveSession | undefined> {
  const session = await db
    .selectFrom('sessions')
    .selectAll()
    .where('token_hash', '=', bearerTokenHash(token))
    .where('expires_at', '>', isoAt(now))
    .executeTakeFirst()
  if (session === undefined) return undefined
  const account = await findAccount(db, session.account_id)
  return account === undefined ? undefined : { account, session }
}

/** Records a session's use: when, from which address and browser. */
export async function touchSession(
  db: Kysely<Database>,
  tokenHash: string,
  origin: SessionOrigin,
  now: number,
): Promise<void> {
  await db
    .updateTable('sessions')
    .set({
      last_used_at: isoAt(now),
      last_address: origin.address,
      user_agent: origin.userAgent?.slice(0, USER_AGENT_KEPT) ?? null,
    })
    .where('token_hash', '=', tokenHash)
    .execute()
}

/** The account's live sessions, most recently used first. */
export function sessionsOf(db: Kysely<Database>, accountId: string, now: number): Promise<SessionRow[]> {
  return db
    .selectFrom('sessions')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('expires_at', '>', isoAt(now))
    .orderBy('last_used_at', 'desc')
    .orderBy('created_at', 'desc')
    .execute()
}

export async function deleteSession(db: Kysely<Database>, token: string): Promise<void> {
  await db.deleteFrom('sessions').where('token_hash', '=', bearerTokenHash(token)).execute()
}

/** Ends one of the account's sessions by its id; false if it has no such session (ended already, or another's). */
export async function deleteSessionById(db: Kysely<Database>, accountId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('sessions')
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst()
  return Number(result.numDeletedRows) === 1
}

/** Ends every session of the account, but the one whose token hash is `keep`; returns how many ended. */
export async function deleteSessionsOf(db: Kysely<Database>, accountId: string, keep?: string): Promise<number> {
  let query = db.deleteFrom('sessions').where('account_id', '=', accountId)
  if (keep !== undefined) query = query.where('token_hash', '<>', keep)
  return Number((await query.executeTakeFirst()).numDeletedRows)
}

export async function deleteExpiredSessions(db: Kysely<Database>, now: number): Promise<void> {
  await db.deleteFrom('sessions').where('expires_at', '<=', isoAt(now)).execute()
}

export async function setPasswordHash(db: Kysely<Database>, accountId: string, passwordHash: string): Promise<void> {
  await db.updateTable('accounts').set({ password_hash: passwordHash }).where('id', '=', accountId).execute()
}

/** Marks the address verified if it is still the account's; false if the account has another one now. */
export async function markEmailVerified(
  db: Kysely<Database>,
  accountId: string,
  email: string,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('accounts')
    .set({ email_verified_at: isoAt(now) })
    .where('id', '=', accountId)
    .where('email', '=', email)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

/** Gives the account a new, verified address; ConflictError when another account has it (the unique index decides). */
export async function changeEmail(db: Kysely<Database>, accountId: string, email: string, now: number): Promise<void> {
  const taken = await db
    .selectFrom('accounts')
    .select('id')
    .where('email', '=', email)
    .where('id', '<>', accountId)
    .executeTakeFirst()
  if (taken !== undefined) throw new ConflictError('Another account has this e-mail address now.')
  await db
    .updateTable('accounts')
    .set({ email, email_verified_at: isoAt(now) })
    .where('id', '=', accountId)
    .execute()
}

/**
 * Takes the account's row lock for the rest of the transaction (a no-op update), so that its
 * count-then-insert limits and its links' one-use rules hold when requests race; false if there
 * is no such account. On SQLite a writing transaction runs alone already.
 */
export async function lockAccount(trx: Kysely<Database>, accountId: string): Promise<boolean> {
  const result = await trx
    .updateTable('accounts')
    .set((eb) => ({ id: eb.ref('id') }))
    .where('id', '=', accountId)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}
