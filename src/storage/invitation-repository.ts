/**
 * Invitations to an organisation (migration 0020). The link carries a random token; only its
 * SHA-256 is stored, so the table alone cannot be used to join anything. Queries only: the rules
 * are in cases/members.ts.
 */
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import { bearerTokenHash } from '../domain/bearer-token.js'
import type { MemberRole } from '../domain/member-roles.js'
import { newInvitationRow, settlePendingInvitation } from './invitation-rows.js'
import type { Database, InvitationRow } from './tables.js'

export const invitationTokenHash = bearerTokenHash

export interface NewInvitation {
  organisationId: string
  /** Normalised (trimmed, lower case). */
  email: string
  role: MemberRole
  invitedBy: string
}

/** Adds an invitation valid until `now + lifetimeMs`; the token goes in the link and nowhere else. */
export async function createInvitation(
  db: Kysely<Database>,
  invitation: NewInvitation,
  now: number,
  lifetimeMs: number,
): Promise<{ row: InvitationRow; token: string }> {
  const { token, row: common } = newInvitationRow(now, lifetimeMs)
  const row: InvitationRow = {
    ...common,
    organisation_id: invitation.organisationId,
    email: invitation.email,
    role: invitation.role,
    invited_by: invitation.invitedBy,
  }
  await db.insertInto('invitations').values(row).execute()
  return { row, token }
}

export async function findInvitationByToken(db: Kysely<Database>, token: string): Promise<InvitationRow | undefined> {
  return db
    .selectFrom('invitations')
    .selectAll()
    .where('token_hash', '=', invitationTokenHash(token))
    .executeTakeFirst()
}

export async function findInvitation(
  db: Kysely<Database>,
  organisationId: string,
  id: string,
): Promise<InvitationRow | undefined> {
  return db
    .selectFrom('invitations')
    .selectAll()
    .where('organisation_id', '=', organisationId)
    .where('id', '=', id)
    .executeTakeFirst()
}

/** Neither accepted nor revoked, and not expired at `now`. */
function pending(db: Kysely<Database>, organisationId: string, now: number) {
  return db
    .selectFrom('invitations')
    .where('invitations.organisation_id', '=', organisationId)
    .where('invitations.accepted_at', 'is', null)
    .where('invitations.revoked_at', 'is', null)
    .where('invitations.expires_at', '>', isoAt(now))
}

export interface PendingInvitation {
  id: string
  email: string
  role: MemberRole
  invitedBy: string
  createdAt: string
  expiresAt: string
}

/** The organisation's pending invitations, newest first, with the inviting account's address. */
export async function pendingInvitations(
  db: Kysely<Database>,
  organisationId: string,
  now: number,
): Promise<PendingInvitation[]> {
  const rows = await pending(db, organisationId, now)
    .innerJoin('accounts as a', 'a.id', 'invitations.invited_by')
    .select([
      'invitations.id',
      'invitations.email',
      'invitations.role',
      'a.email as invited_by',
      'invitations.created_at',
      'invitations.expires_at',
    ])
    .orderBy('invitations.created_at', 'desc')
    .orderBy('invitations.id')
    .execute()
  return rows.map((row) => ({
    id: row.id,
    email: row.email,
    role: row.role,
    invitedBy: row.invited_by,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  }))
}

export async function countPendingInvitations(
  db: Kysely<Database>,
  organisationId: string,
  now: number,
): Promise<number> {
  const row = await pending(db, organisationId, now)
    .select((eb) => eb.fn.countAll<number | string>().as('pending'))
    .executeTakeFirstOrThrow()
  return Number(row.pending)
}

/** Revokes the address's pending invitations to the organisation (a new one replaces them); their ids. */
export async function revokePendingFor(
  db: Kysely<Database>,
  organisationId: string,
  email: string,
  now: number,
): Promise<string[]> {
  const rows = await db
    .updateTable('invitations')
    .set({ revoked_at: isoAt(now) })
    .where('organisation_id', '=', organisationId)
    .where('email', '=', email)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', isoAt(now))
    .returning('id')
    .execute()
  return rows.map((row) => row.id)
}

/** Revokes one pending invitation; false when it was no longer pending. */
export function revokePendingInvitation(db: Kysely<Database>, id: string, now: number): Promise<boolean> {
  return settlePendingInvitation(db, 'invitations', id, 'revoked_at', now)
}

/**
 * Marks the invitation used, only if it still was pending at `now`: of two acceptances at once,
 * one changes the row and the other changes nothing.
 */
export function markInvitationAccepted(db: Kysely<Database>, id: string, now: number): Promise<boolean> {
  return settlePendingInvitation(db, 'invitations', id, 'accepted_at', now)
}
