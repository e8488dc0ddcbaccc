/**
 * Schools as the operator sees them (migration 0012): from a district's roster (their `external_id`
 * is the roster's sourcedId) or created by hand, each with how many students attend it and how
 * many shares of it are in force. Adding one by hand is cases/schools.ts's.
 */
import type { Kysely } from 'kysely'
import { ConflictError, NotFoundError } from '../domain/errors.js'
import { UUID } from '../domain/uuid.js'
import type { Database, SchoolRow } from './tables.js'

type Db = Kysely<Database>

/** The school with this id. */
export function schoolById(db: Db, id: string): Promise<SchoolRow | undefined> {
  return db.selectFrom('schools').selectAll().where('id', '=', id).executeTakeFirst()
}

/** The id of the school named exactly `name`, if one is. */
export async function schoolIdNamed(db: Db, name: string): Promise<string | undefined> {
  const row = await db.selectFrom('schools').select('id').where('name', '=', name).executeTakeFirst()
  return row?.id
}

export async function insertSchoolRow(trx: Db, row: SchoolRow): Promise<void> {
  await trx.insertInto('schools').values(row).execute()
}

export interface SchoolSummary {
  id: string
  name: string
  externalId: string | null
  identifier: string | null
  /** The source system of the roster that keeps it, and its district there; null when not known. */
  source: string | null
  district: string | null
  createdAt: string
  /** Students who attend it. */
  students: number
  /** Shares of it in force, one per organisation at most. */
  shares: number
}

/** Every school, by name, with its counts. */
export async function listSchools(db: Db): Promise<SchoolSummary[]> {
  const schools = await db.selectFrom('schools').selectAll().orderBy('name').orderBy('id').execute()
  const students = await db
    .selectFrom('student_schools')
    .select(['school_id', (eb) => eb.fn.countAll<number | string>().as('n')])
    .groupBy('school_id')
    .execute()
  const shares = await db
    .selectFrom('shares')
    .select(['school_id', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('kind', '=', 'school')
    .where('ended_at', 'is', null)
    .groupBy('school_id')
    .execute()
  const studentCounts = new Map(students.map((row) => [row.school_id, Number(row.n)]))
  const shareCounts = new Map(shares.map((row) => [row.school_id, Number(row.n)]))
  return schools.map((row) => ({
    id: row.id,
    name: row.name,
    externalId: row.external_id,
    identifier: row.identifier,
    source: row.source,
    district: row.district_external_id,
    createdAt: row.created_at,
    students: studentCounts.get(row.id) ?? 0,
    shares: shareCounts.get(row.id) ?? 0,
  }))
}

/**
 * A school by id, by external id (the roster's sourcedId), or by exact name, tried in that order.
 * A name two schools share is refused: their ids tell them apart.
 */
export async function findSchool(db: Db, reference: string): Promise<SchoolRow> {
  const ref = reference.trim()
  if (UUID.test(ref)) {
    const byId = await db.selectFrom('schools').selectAll().where('id', '=', ref.toLowerCase()).executeTakeFirst()
    if (byId !== undefined) return byId
  }
  const byExternalId = await db.selectFrom('schools').selectAll().where('external_id', '=', ref).executeTakeFirst()
  if (byExternalId !== undefined) return byExternalId
  const byName = await db.selectFrom('schools').selectAll().where('name', '=', ref).limit(2).execute()
  if (byName.length > 1) throw new ConflictError(`several schools are named "${ref}"; name the school by its id`)
  if (byName[0] === undefined) throw new NotFoundError(`no school "${ref}"`)
  return byName[0]
}
