/**
 * The queries of a roster import (cases/roster-import/import.ts): students and schools found by the id
 * the district's system gives them (`external_id`), which schools students attend, and the rows
 * an import adds or renames. Attendance itself changes only through cases/school-attendance.ts, which
 * also makes and ends the links that school shares imply.
 */
import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { TierId } from '../domain/tiers.js'
import { newStudentRow } from './student-repository.js'
import type { Database } from './tables.js'

type Db = Kysely<Database>

/** Ids per statement: under both engines' bound-parameter limits with room to spare. */
export const ROSTER_CHUNK = 500

/** A school as an import compares it: what the export gives, and where it came from. */
export interface RosterSchoolFields {
  name: string
  identifier: string | null
  /** The source system that keeps it; null when not known. */
  source: string | null
  /** The sourcedId of its district org; null when not known. */
  district: string | null
}

export interface StoredRosterSchool extends RosterSchoolFields {
  id: string
}

export interface StoredRosterStudent {
  id: string
  externalId: string
  firstName: string
  sandbox: boolean
  createdAt: string
  source: string | null
}

/** Every school with an external id, by it: a district has hundreds, not millions. */
export async function schoolsByExternalId(db: Db): Promise<Map<string, StoredRosterSchool>> {
  const rows = await db
    .selectFrom('schools')
    .select(['id', 'name', 'identifier', 'external_id', 'source', 'district_external_id'])
    .where('external_id', 'is not', null)
    .execute()
  return new Map(
    rows.map((row) => [
      row.external_id!,
      {
        id: row.id,
        name: row.name,
        identifier: row.identifier,
        source: row.source,
        district: row.district_external_id,
      },
    ]),
  )
}

/** Adds a school with a new id; returns the id. */
export async function insertSchool(
  trx: Db,
  school: RosterSchoolFields & { externalId: string },
  at: string,
): Promise<string> {
  const id = randomUUID()
  await trx
    .insertInto('schools')
    .values({
      id,
      name: school.name,
      identifier: school.identifier,
      external_id: school.externalId,
      source: school.source,
      district_external_id: school.district,
      created_at: at,
    })
    .execute()
  return id
}

export async function updateSchool(trx: Db, id: string, school: RosterSchoolFields) {
  await trx
    .updateTable('schools')
    .set({
      name: school.name,
      identifier: school.identifier,
      source: school.source,
      district_external_id: school.district,
    })
    .where('id', '=', id)
    .execute()
}

/** The stored students among `externalIds` (at most ROSTER_CHUNK), by external id. */
export async function studentsByExternalId(
  db: Db,
  externalIds: readonly string[],
): Promise<Map<string, StoredRosterStudent>> {
  const found = new Map<string, StoredRosterStudent>()
  if (externalIds.length === 0) return found
  const rows = await db
    .selectFrom('students')
    .select(['id', 'external_id', 'first_name', 'sandbox', 'created_at', 'source'])
    .where('external_id', 'in', externalIds)
    .execute()
  for (const row of rows)
    found.set(row.external_id!, {
      id: row.id,
      externalId: row.external_id!,
      firstName: row.first_name,
      sandbox: Number(row.sandbox) === 1,
      createdAt: row.created_at,
      source: row.source,
    })
  return found
}

/** A school a student attends: its id, and its external id (null for a school made by hand). */
export interface Attended {
  schoolId: string
  externalId: string | null
}

/** The schools each of `studentIds` (at most ROSTER_CHUNK) attends. */
export async function schoolsOfStudents(db: Db, studentIds: readonly string[]): Promise<Map<string, Attended[]>> {
  const found = new Map<string, Attended[]>()
  if (studentIds.length === 0) return found
  const rows = await db
    .selectFrom('student_schools as ss')
    .innerJoin('schools as s', 's.id', 'ss.school_id')
    .select(['ss.student_id', 'ss.school_id', 's.external_id'])
    .where('ss.student_id', 'in', studentIds)
    .execute()
  for (const row of rows) {
    const list = found.get(row.student_id) ?? []
    list.push({ schoolId: row.school_id, externalId: row.external_id })
    found.set(row.student_id, list)
  }
  return found
}

/** Real students with an external id, in id order after `after`, `limit` at a time. */
export async function rosterStudentsAfter(
  db: Db,
  after: string | undefined,
  limit: number,
): Promise<{ id: string; externalId: string }[]> {
  let query = db
    .selectFrom('students')
    .select(['id', 'external_id'])
    .where('external_id', 'is not', null)
    .where('sandbox', '=', 0)
    .orderBy('id')
    .limit(limit)
  if (after !== undefined) query = query.where('id', '>', after)
  return (await query.execute()).map((row) => ({ id: row.id, externalId: row.external_id! }))
}

/** The students attending `schoolId`, in id order after `after`, `limit` at a time. */
export async function studentsOfSchool(
  db: Db,
  schoolId: string,
  after: string | undefined,
  limit: number,
): Promise<string[]> {
  let query = db
    .selectFrom('student_schools')
    .select('student_id')
    .where('school_id', '=', schoolId)
    .orderBy('student_id')
    .limit(limit)
  if (after !== undefined) query = query.where('student_id', '>', after)
  return (await query.execute()).map((row) => row.student_id)
}

export interface NewRosterStudent {
  id: string
  externalId: string
  firstName: string
  tier: TierId
  /** The source system of the roster that lists the student first; null when not known. */
  source: string | null
}

/** Adds real students (at most ROSTER_CHUNK); their tier's change-log rows are the caller's. */
export async function insertStudents(trx: Db, rows: readonly NewRosterStudent[], at: string): Promise<void> {
  if (rows.length === 0) return
  await trx
    .insertInto('students')
    .values(rows.map((row) => ({ ...newStudentRow(row, at, 0), external_id: row.externalId, source: row.source })))
    .execute()
}

/**
 * A real student's new first name. The tier and its time are left alone: a name is not in the
 * change log, and an enroll racing the import keeps the tier it set.
 */
export async function renameStudent(trx: Db, id: string, firstName: string): Promise<void> {
  await trx
    .updateTable('students')
    .set({ first_name: firstName })
    .where('id', '=', id)
    .where('sandbox', '=', 0)
    .execute()
}

/**
 * Students (at most ROSTER_CHUNK) whose source is not known yet take `source`: the first roster of
 * a known source to list them.
 */
export async function claimStudents(trx: Db, ids: readonly string[], source: string): Promise<void> {
  if (ids.length === 0) return
  await trx.updateTable('students').set({ source }).where('id', 'in', ids).where('source', 'is', null).execute()
}

/** The names of `ids` (at most ROSTER_CHUNK partner organisations), for a preview. */
export async function organisationNames(db: Db, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map()
  const rows = await db.selectFrom('organisations').select(['id', 'name']).where('id', 'in', ids).execute()
  return new Map(rows.map((row) => [row.id, row.name]))
}
