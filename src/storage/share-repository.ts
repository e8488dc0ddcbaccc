/**
 * The rows of shares (migration 0012): a share of a school or of a list of students with a
 * partner organisation, and the students each holds (`share_students`). What a share means for
 * links, and who is told, is cases/shares.ts's; these are its queries.
 */
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import type { Link } from './school-share-repository.js'
import type { Database, ShareRow } from './tables.js'
import { chunks } from './statement-chunks.js'

type Db = Kysely<Database>

/**
 * Adds `studentIds` to the share and links each to its organisation where not linked yet;
 * returns how many links were made. The share's row exists (or is inserted in this transaction).
 */
export async function holdStudents(
  trx: Db,
  share: { id: string; organisationId: string },
  studentIds: readonly string[],
  now: number,
): Promise<number> {
  const at = isoAt(now)
  let linked = 0
  for (const part of chunks([...new Set(studentIds)])) {
    const members = part.map((id) => ({ share_id: share.id, student_id: id, organisation_id: share.organisationId }))
    linked += (await holdInShares(trx, members, at)).length
  }
  return linked
}

/**
 * Adds each of `members`' students to its share and links it to the share's organisation where
 * not linked yet; returns the links made.
 */
export async function holdInShares(
  trx: Db,
  members: readonly { share_id: string; student_id: string; organisation_id: string }[],
  at: string,
): Promise<Link[]> {
  await trx
    .insertInto('share_students')
    .values([...members])
    .onConflict((oc) => oc.columns(['share_id', 'student_id']).doNothing())
    .execute()
  const made = await trx
    .insertInto('student_organisations')
    .values(
      members.map((row) => ({ student_id: row.student_id, organisation_id: row.organisation_id, created_at: at })),
    )
    .onConflict((oc) => oc.columns(['student_id', 'organisation_id']).doNothing())
    .returning(['student_id', 'organisation_id'])
    .execute()
  return made.map((row) => ({ studentId: row.student_id, organisationId: row.organisation_id }))
}

/** The share with this id, ended or not. */
export function shareById(db: Db, id: string): Promise<ShareRow | undefined> {
  return db.selectFrom('shares').selectAll().where('id', '=', id).executeTakeFirst()
}

/** The organisation's share of the school in force, if any: there is one at most. */
export function schoolShareInForce(db: Db, organisationId: string, schoolId: string): Promise<ShareRow | undefined> {
  return db
    .selectFrom('shares')
    .selectAll()
    .where('organisation_id', '=', organisationId)
    .where('school_id', '=', schoolId)
    .where('kind', '=', 'school')
    .where('ended_at', 'is', null)
    .executeTakeFirst()
}

export async function insertShare(trx: Db, share: ShareRow): Promise<void> {
  await trx.insertInto('shares').values(share).execute()
}

/** The students who attend the school, sandbox students never among them whatever a school's rows say. */
export async function realStudentsOfSchool(db: Db, schoolId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('student_schools as ss')
    .innerJoin('students as s', 's.id', 'ss.student_id')
    .select('ss.student_id')
    .where('ss.school_id', '=', schoolId)
    .where('s.sandbox', '=', 0)
    .execute()
  return rows.map((row) => row.student_id)
}

/** Marks the share ended at `endedAt`. */
export async function markShareEnded(trx: Db, shareId: string, endedAt: string): Promise<void> {
  await trx.updateTable('shares').set({ ended_at: endedAt }).where('id', '=', shareId).execute()
}

/** Takes every student out of the share; returns the links it held them in. */
export async function releaseShareStudents(trx: Db, shareId: string): Promise<Link[]> {
  const held = await trx
    .deleteFrom('share_students')
    .where('share_id', '=', shareId)
    .returning(['student_id', 'organisation_id'])
    .execute()
  return held.map((row) => ({ studentId: row.student_id, organisationId: row.organisation_id }))
}
