/**
 * Dashboard accounts (partners sign up; operators are created with the CLI) and their
 * sessions. A session cookie carries a random token; only its SHA-256 is stored.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import { ConflictError } from '../domain/errors.js'
import type { AccountRow, Database } from './tables.js'

export type Role = 'partner' | 'operator'

export interface NewAccount {
  email: string
  passwordHash: string
  role: Role
  sandboxOrganisationId?: string | null
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

function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

/** A new session; the returned token goes in the cookie and nowhere else. */
export async function createSession(
  db: Kysely<Database>,
  accountId: string,
  now: number,
  lifetimeMs: number,
): Promise<string> {
  const token = randomBytes(32).toString('base64url')
  await db
    .insertInto('sessions')
    .values({
      token_hash: tokenHash(token),
      account_id: accountId,
      created_at: isoAt(now),
      expires_at: isoAt(now + lifetimeMs),
    })
    .execute()
  return token
}

/** The account behind a live session token, or undefined. */
export async function accountForSession(
  db: Kysely<Database>,
  token: string,
  now: number,
): Promise<AccountRow | undefined> {
  return db
    .selectFrom('sessions as s')
    .innerJoin('accounts as a', 'a.id', 's.account_id')
    .selectAll('a')
    .where('s.token_hash', '=', tokenHash(token))
    .where('s.expires_at', '>', isoAt(now))
    .executeTakeFirst()
}

export async function deleteSession(db: Kysely<Database>, token: string): Promise<void> {
  await db.deleteFrom('sessions').where('token_hash', '=', tokenHash(token)).execute()
}

export async function deleteExpiredSessions(db: Kysely<Database>, now: number): Promise<void> {
  await db.deleteFrom('sessions').where('expires_at', '<=', isoAt(now)).execute()
}
