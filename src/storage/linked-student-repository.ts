/**
 * What the operator sees of students before unlinking or erasing one: an organisation's linked
 * students by id, and one student's links and amount of progress. Ids, tiers and counts only:
 * the operator acts on ids the school gives, and needs no child's name to do so.
 */
import type { Kysely } from 'kysely'
import type { TierId } from '../domain/tiers.js'
import { UUID } from '../domain/uuid.js'
import { keysetPage } from './keyset-page.js'
import type { Database } from './tables.js'

export interface LinkedStudent {
  id: string
  /** The student's id in the district's system, when a roster gave one. */
  externalId: string | null
  tier: TierId
  linkedAt: string
}

/** One page of the organisation's linked students in id order, after `after`; `next` when another follows. */
export async function linkedStudents(
  db: Kysely<Database>,
  organisationId: string,
  page: { after?: string; limit: number },
): Promise<{ students: LinkedStudent[]; next: string | null }> {
  const { rows, next } = keysetPage(
    await db
      .selectFrom('student_organisations as so')
      .innerJoin('students as s', 's.id', 'so.student_id')
      .select(['s.id', 's.external_id', 's.tier', 'so.created_at'])
      .where('so.organisation_id', '=', organisationId)
      .$if(page.after !== undefined, (q) => q.where('so.student_id', '>', page.after!))
      .orderBy('so.student_id')
      .limit(page.limit + 1)
      .execute(),
    page.limit,
  )
  return {
    students: rows.map((row) => ({
      id: row.id,
      externalId: row.external_id,
      tier: row.tier,
      linkedAt: row.created_at,
    })),
    next,
  }
}

/** Whether the student is linked to the organisation. */
export async function isLinked(db: Kysely<Database>, organisationId: string, studentId: string): Promise<boolean> {
  const link = await db
    .selectFrom('student_organisations')
    .select('student_id')
    .where('student_id', '=', studentId)
    .where('organisation_id', '=', organisationId)
    .executeTakeFirst()
  return link !== undefined
}

export interface StudentSummary {
  id: string
  /** The student's id in the district's system, when a roster gave one. */
  externalId: string | null
  sandbox: boolean
  organisations: { id: string; name: string }[]
  progressEntries: number
}

/** The id of the student a search names: our id when a student has it, else the district's id. */
export async function studentIdBySearch(db: Kysely<Database>, typed: string): Promise<string | undefined> {
  const lower = typed.toLowerCase()
  if (UUID.test(lower)) {
    const own = await db.selectFrom('students').select('id').where('id', '=', lower).executeTakeFirst()
    if (own !== undefined) return own.id
  }
  const external = await db.selectFrom('students').select('id').where('external_id', '=', typed).executeTakeFirst()
  return external?.id
}

/** The student's links and how much progress it has, or undefined when no student has the id. */
export async function studentSummary(db: Kysely<Database>, id: string): Promise<StudentSummary | undefined> {
  const student = await db
    .selectFrom('students')
    .select(['id', 'sandbox', 'external_id'])
    .where('id', '=', id)
    .executeTakeFirst()
  if (student === undefined) return undefined
  const organisations = await db
    .selectFrom('student_organisations as so')
    .innerJoin('organisations as o', 'o.id', 'so.organisation_id')
    .select(['o.id', 'o.name'])
    .where('so.student_id', '=', id)
    .orderBy('o.name')
    .execute()
  const { n } = await db
    .selectFrom('progress')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('student_id', '=', id)
    .executeTakeFirstOrThrow()
  return {
    id: student.id,
    externalId: student.external_id,
    sandbox: Number(student.sandbox) === 1,
    organisations,
    progressEntries: Number(n),
  }
}
