/**
 * What partner and operator invitations share (invitation-repository.ts, operator-repository.ts):
 * a random token whose hash alone is kept, a lifetime, and one settlement (accepted or revoked)
 * that happens only while the invitation is still pending.
 */
import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import { bearerTokenHash, newBearerToken } from '../domain/bearer-token.js'
import type { Database } from './tables.js'

export type InvitationTable = 'invitations' | 'operator_invitations'

/** A new invitation's id, token hash and times; the token goes in the link and nowhere else. */
export function newInvitationRow(now: number, lifetimeMs: number) {
  const token = newBearerToken()
  const row = {
    id: randomUUID(),
    token_hash: bearerTokenHash(token),
    created_at: isoAt(now),
    expires_at: isoAt(now + lifetimeMs),
    accepted_at: null,
    revoked_at: null,
  }
  return { token, row }
}

/**
 * Marks the invitation accepted or revoked, only if it still was pending at `now`: of two
 * settlements at once, one changes the row and the other changes nothing.
 */
export async function settlePendingInvitation(
  db: Kysely<Database>,
  table: InvitationTable,
  id: string,
  settled: 'accepted_at' | 'revoked_at',
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable(table)
    .set({ [settled]: isoAt(now) })
    .where('id', '=', id)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', isoAt(now))
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}
