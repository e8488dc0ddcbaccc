/**
 * What the operator reads of an organisation's shares: each share with how many students it
 * holds, and the organisation's shared students page by page with the shares that hold each
 * (the reason it sees them). Ids and external ids only, never a name: the operator acts on the
 * ids the district gives.
 */
import type { Kysely } from 'kysely'
import { linkedStudents } from './linked-student-repository.js'
import type { Database, ShareKind } from './tables.js'

type Db = Kysely<Database>

export interface ShareSummary {
  id: string
  kind: ShareKind
  label: string
  schoolId: string | null
  createdAt: string
  createdBy: string | null
  endedAt: string | null
  /** Students it holds now; none once ended. */
  students: number
}

/** The organisation's shares: those in force first, then the ended ones, newest first within each. */
export async function listShares(db: Db, organisationId: string): Promise<ShareSummary[]> {
  const shares = await db
    .selectFrom('shares')
    .selectAll()
    .where('organisation_id', '=', organisationId)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute()
  const inForce = shares.filter((share) => share.ended_at === null).map((share) => share.id)
  const counts = new Map<string, number>()
  for (let i = 0; i < inForce.length; i += 500) {
    const rows = await db
      .selectFrom('share_students')
      .select(['share_id', (eb) => eb.fn.countAll<number | string>().as('n')])
      .where('share_id', 'in', inForce.slice(i, i + 500))
      .groupBy('share_id')
      .execute()
    for (const row of rows) counts.set(row.share_id, Number(row.n))
  }
  const summaries = shares.map((share) => ({
    id: share.id,
    kind: share.kind,
    label: share.label,
    schoolId: share.school_id,
    createdAt: share.created_at,
    createdBy: share.created_by,
    endedAt: share.ended_at,
    students: counts.get(share.id) ?? 0,
  }))
  return [...summaries.filter((s) => s.endedAt === null), ...summaries.filter((s) => s.endedAt !== null)]
}

/** How many students are linked to the organisation. */
export async function countLinked(db: Db, organisationId: string): Promise<number> {
  const { n } = await db
    .selectFrom('student_organisations')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('organisation_id', '=', organisationId)
    .executeTakeFirstOrThrow()
  return Number(n)
}

export interface ShareReason {
  shareId: string
  kind: ShareKind
  /** The school's name for a school share, the list's label for a list share. */
  label: string
}

export interface SharedStudent {
  id: string
  externalId: string | null
  linkedAt: string
  /** The shares in force that hold the student. */
  reasons: ShareReason[]
}

/** One page of the organisation's linked students in id order, after `after`, each with its reasons. */
export async function sharedStudents(
  db: Db,
  organisationId: string,
  page: { after?: string; limit: number },
): Promise<{ students: SharedStudent[]; next: string | null }> {
  const { students: rows, next } = await linkedStudents(db, organisationId, page)
  const reasons = new Map<string, ShareReason[]>()
  if (rows.length > 0) {
    const held = await db
      .selectFrom('share_students as ss')
      .innerJoin('shares as sh', 'sh.id', 'ss.share_id')
      .select(['ss.student_id', 'sh.id', 'sh.kind', 'sh.label'])
      .where('ss.organisation_id', '=', organisationId)
      .where(
        'ss.student_id',
        'in',
        rows.map((row) => row.id),
      )
      .orderBy('sh.created_at')
      .orderBy('sh.id')
      .execute()
    for (const row of held) {
      const list = reasons.get(row.student_id) ?? []
      list.push({ shareId: row.id, kind: row.kind, label: row.label })
      reasons.set(row.student_id, list)
    }
  }
  return {
    students: rows.map((row) => ({
      id: row.id,
      externalId: row.externalId,
      linkedAt: row.linkedAt,
      reasons: reasons.get(row.id) ?? [],
    })),
    next,
  }
}

/** How many students the share holds. */
export async function studentsInShare(db: Db, shareId: string): Promise<number> {
  const { n } = await db
    .selectFrom('share_students')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('share_id', '=', shareId)
    .executeTakeFirstOrThrow()
  return Number(n)
}

/** How many of the share's students no other share holds: those ending it would unlink. */
export async function heldByNoOtherShare(db: Db, shareId: string): Promise<number> {
  const { n } = await db
    .selectFrom('share_students as ss')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('ss.share_id', '=', shareId)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('share_students as other')
            .select('other.share_id')
            .whereRef('other.student_id', '=', 'ss.student_id')
            .whereRef('other.organisation_id', '=', 'ss.organisation_id')
            .whereRef('other.share_id', '<>', 'ss.share_id'),
        ),
      ),
    )
    .executeTakeFirstOrThrow()
  return Number(n)
}

/** The organisation's shares that hold the student now: those unlinking it takes it out of. */
export async function sharesHoldingStudent(db: Db, organisationId: string, studentId: string): Promise<ShareReason[]> {
  const rows = await db
    .selectFrom('share_students as ss')
    .innerJoin('shares as sh', 'sh.id', 'ss.share_id')
    .select(['sh.id', 'sh.kind', 'sh.label'])
    .where('ss.organisation_id', '=', organisationId)
    .where('ss.student_id', '=', studentId)
    .orderBy('sh.created_at')
    .orderBy('sh.id')
    .execute()
  return rows.map((row) => ({ shareId: row.id, kind: row.kind, label: row.label }))
}
