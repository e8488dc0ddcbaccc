/**
 * The access change log (migration 0003): what each instance's key cache must forget. A writer
 * records a change inside the transaction that makes it; readers ask for the changes after the
 * last sequence number they have seen.
 */
import { type Kysely, sql } from 'kysely'
import type { AccessChangeKind, AccessChangeRow, Database } from './tables.js'

export type AccessChange =
  | { kind: KeyChangeKind; keyId: string; organisationId: string }
  | { kind: Exclude<AccessChangeKind, KeyChangeKind>; organisationId: string }

/** Changes that concern one key, which each instance's key cache forgets. */
type KeyChangeKind = 'key_revoked' | 'key_rolled'

/**
 * Records a change; call it inside the transaction that makes the change. Bumping the `access`
 * version first locks its `meta` row until commit, so two writers get consecutive sequence
 * numbers and the later one commits later (see the migration). Returns the sequence number.
 *
 * @example
 * await inTransaction(db, async (trx) => {
 *   await trx.updateTable('organisations').set({ status: 'suspended' }).where('id', '=', id).execute()
 *   await recordAccessChange(trx, { kind: 'organisation_status', organisationId: id })
 * })
 */
export async function recordAccessChange(trx: Kysely<Database>, change: AccessChange): Promise<number> {
  const bumped = await trx
    .updateTable('meta')
    .set({ version: sql`version + 1` })
    .where('name', '=', 'access')
    .returning('version')
    .executeTakeFirstOrThrow()
  const seq = Number(bumped.version)
  await trx
    .insertInto('access_changes')
    .values({
      seq,
      kind: change.kind,
      key_id: 'keyId' in change ? change.keyId : null,
      organisation_id: change.organisationId,
    })
    .execute()
  return seq
}

/** Changes with a sequence number above `after`, oldest first, at most `limit` of them. */
export async function accessChangesAfter(
  db: Kysely<Database>,
  after: number,
  limit: number,
): Promise<AccessChangeRow[]> {
  const rows = await db
    .selectFrom('access_changes')
    .selectAll()
    .where('seq', '>', after)
    .orderBy('seq')
    .limit(limit)
    .execute()
  // PostgreSQL's driver may hand integers back as strings.
  return rows.map((row) => ({ ...row, seq: Number(row.seq) }))
}
