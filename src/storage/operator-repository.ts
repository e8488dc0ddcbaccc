/**
 * Operator accounts and their invitations (migration 0023). Queries only: the rules are in
 * cases/operators.ts. An invitation's link carries a random token; only its SHA-256 is stored.
 */
import { type Kysely, PostgresAdapter } from 'kysely'
import { isoAt } from '../clock.js'
import { bearerTokenHash } from '../domain/bearer-token.js'
import type { OperatorRole } from '../domain/operator-roles.js'
import { newInvitationRow, settlePendingInvitation } from './invitation-rows.js'
import type { Database, OperatorInvitationRow } from './tables.js'

export const operatorInvitationTokenHash = bearerTokenHash

/** An operator as the Operators page and `curriculum operator list` show it. */
export interface OperatorListing {
  id: string
  email: string
  role: OperatorRole
  createdAt: string
  /** A confirmed authenticator. */
  secondFactor: boolean
  /** The latest use of any of its live sessions (kept to the minute), or null. */
  lastActiveAt: string | null
}

export async function listOperators(db: Kysely<Database>): Promise<OperatorListing[]> {
  const rows = await db
    .selectFrom('accounts as a')
    .leftJoin('totp_factors as t', 't.account_id', 'a.id')
    .select((eb) => [
      'a.id',
      'a.email',
      'a.operator_role',
      'a.created_at',
      't.confirmed_at',
      eb
        .selectFrom('sessions as s')
        .whereRef('s.account_id', '=', 'a.id')
        .where('s.second_factor_pending', '=', 0)
        .select((s) => s.fn.max('s.last_used_at').as('last'))
        .as('last_active_at'),
    ])
    .where('a.role', '=', 'operator')
    .orderBy('a.email')
    .execute()
  return rows.map((row) => ({
    id: row.id,
    email: row.email,
    // Only a row written past createAccount could lack a role: it gets no admin's rights.
    role: row.operator_role ?? 'operator',
    createdAt: row.created_at,
    secondFactor: row.confirmed_at !== null && row.confirmed_at !== undefined,
    lastActiveAt: row.last_active_at ?? null,
  }))
}

/**
 * Locks every operator account until the transaction ends, in one order, so two changes to the
 * operators (two admins demoting each other) run one after the other; the rows it returns are
 * read after the lock. On SQLite a writing transaction runs alone already.
 */
export async function lockOperators(
  trx: Kysely<Database>,
): Promise<{ id: string; email: string; role: OperatorRole }[]> {
  const query = trx
    .selectFrom('accounts')
    .select(['id', 'email', 'operator_role'])
    .where('role', '=', 'operator')
    .orderBy('id')
  const rows = await (trx.getExecutor().adapter instanceof PostgresAdapter ? query.forUpdate() : query).execute()
  return rows.map((row) => ({ id: row.id, email: row.email, role: row.operator_role ?? 'operator' }))
}

export async function setOperatorRole(db: Kysely<Database>, accountId: string, role: OperatorRole): Promise<void> {
  await db
    .updateTable('accounts')
    .set({ operator_role: role })
    .where('id', '=', accountId)
    .where('role', '=', 'operator')
    .execute()
}

/**
 * Deletes an operator account and what hangs on it: its sessions (they end at once), its
 * second factor, its links and key views, its known browsers. The audit log keeps its address. Every table that
 * references accounts must be cleared here (test/cases/operators.test.ts lists them).
 */
export async function deleteOperatorAccount(db: Kysely<Database>, accountId: string): Promise<{ sessions: number }> {
  const sessions = await db.deleteFrom('sessions').where('account_id', '=', accountId).executeTakeFirst()
  // The second factor's tables in the order its checks lock them (count, authenticator, codes).
  for (const table of [
    'key_views',
    'account_links',
    'second_factor_guesses',
    'totp_factors',
    'recovery_codes',
    'passkeys',
    // Notices (migration 0022): the browsers it signed in from; an operator has no opt-outs, cleared all the same.
    'known_devices',
    'notice_opt_outs',
  ] as const)
    await db.deleteFrom(table).where('account_id', '=', accountId).execute()
  await db.deleteFrom('accounts').where('id', '=', accountId).where('role', '=', 'operator').execute()
  return { sessions: Number(sessions.numDeletedRows) }
}

export interface NewOperatorInvitation {
  /** Normalised (trimmed, lower case). */
  email: string
  role: OperatorRole
  /** The inviting admin's address. */
  invitedBy: string
}

/** Adds an invitation valid until `now + lifetimeMs`; the token goes in the link and nowhere else. */
export async function createOperatorInvitation(
  db: Kysely<Database>,
  invitation: NewOperatorInvitation,
  now: number,
  lifetimeMs: number,
): Promise<{ row: OperatorInvitationRow; token: string }> {
  const { token, row: common } = newInvitationRow(now, lifetimeMs)
  const row: OperatorInvitationRow = {
    ...common,
    email: invitation.email,
    role: invitation.role,
    invited_by: invitation.invitedBy,
  }
  await db.insertInto('operator_invitations').values(row).execute()
  return { row, token }
}

export function findOperatorInvitationByToken(
  db: Kysely<Database>,
  token: string,
): Promise<OperatorInvitationRow | undefined> {
  return db
    .selectFrom('operator_invitations')
    .selectAll()
    .where('token_hash', '=', operatorInvitationTokenHash(token))
    .executeTakeFirst()
}

/** Neither accepted nor revoked, and not expired at `now`. */
function pending(db: Kysely<Database>, now: number) {
  return db
    .selectFrom('operator_invitations')
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', isoAt(now))
}

/** The pending invitations, newest first. */
export function pendingOperatorInvitations(db: Kysely<Database>, now: number): Promise<OperatorInvitationRow[]> {
  return pending(db, now).selectAll().orderBy('created_at', 'desc').orderBy('id').execute()
}

export async function countPendingOperatorInvitations(db: Kysely<Database>, now: number): Promise<number> {
  const row = await pending(db, now)
    .select((eb) => eb.fn.countAll<number | string>().as('pending'))
    .executeTakeFirstOrThrow()
  return Number(row.pending)
}

/** Revokes the pending invitations: of one address (a new one replaces them), or the one `id` names. */
export async function revokePendingOperatorInvitations(
  db: Kysely<Database>,
  which: { email: string } | { id: string },
  now: number,
): Promise<string[]> {
  let query = db
    .updateTable('operator_invitations')
    .set({ revoked_at: isoAt(now) })
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', isoAt(now))
  query = 'email' in which ? query.where('email', '=', which.email) : query.where('id', '=', which.id)
  const rows = await query.returning('id').execute()
  return rows.map((row) => row.id)
}

/** Marks the invitation used, only if it still was pending at `now`: of two acceptances at once, one wins. */
export function markOperatorInvitationAccepted(db: Kysely<Database>, id: string, now: number): Promise<boolean> {
  return settlePendingInvitation(db, 'operator_invitations', id, 'accepted_at', now)
}
