/**
 * What erasing students would remove, counted per student without writing: the organisations
 * each is linked to (each would be told, `student_deleted`), its progress entries and its
 * change-log rows, as cases/erasure.ts's eraseStudentRows deletes them. `curriculum students
 * erase` shows it before asking.
 */
import type { Kysely } from 'kysely'
import type { Database } from './tables.js'

type Db = Kysely<Database>

/** Ids per statement: under both engines' bound-parameter limits with room to spare. */
const CHUNK = 500

export interface StudentToErase {
  id: string
  sandbox: boolean
  organisations: { id: string; name: string }[]
  progress: number
  /** Change-log rows about the student (tier and progress changes); notices to partners stay. */
  changes: number
}

export interface ErasurePreview {
  /** The students found, in the order of `ids`. */
  students: StudentToErase[]
  /** Ids no student has (never stored, or erased already). */
  missing: string[]
}

export async function erasurePreview(db: Db, ids: readonly string[]): Promise<ErasurePreview> {
  const found = new Map<string, StudentToErase>()
  for (let from = 0; from < ids.length; from += CHUNK) {
    const part = ids.slice(from, from + CHUNK)
    for (const row of await db.selectFrom('students').select(['id', 'sandbox']).where('id', 'in', part).execute())
      found.set(row.id, { id: row.id, sandbox: Number(row.sandbox) === 1, organisations: [], progress: 0, changes: 0 })
    const present = part.filter((id) => found.has(id))
    if (present.length === 0) continue
    for (const row of await db
      .selectFrom('student_organisations as so')
      .innerJoin('organisations as o', 'o.id', 'so.organisation_id')
      .select(['so.student_id', 'o.id', 'o.name'])
      .where('so.student_id', 'in', present)
      .orderBy('o.name')
      .execute())
      found.get(row.student_id)!.organisations.push({ id: row.id, name: row.name })
    for (const row of await db
      .selectFrom('progress')
      .select(['student_id', (eb) => eb.fn.countAll<number | string>().as('n')])
      .where('student_id', 'in', present)
      .groupBy('student_id')
      .execute())
      found.get(row.student_id)!.progress = Number(row.n)
    for (const row of await db
      .selectFrom('student_changes')
      .select(['student_id', (eb) => eb.fn.countAll<number | string>().as('n')])
      .where('student_id', 'in', present)
      .where('organisation_id', 'is', null)
      .groupBy('student_id')
      .execute())
      found.get(row.student_id)!.changes = Number(row.n)
  }
  return {
    students: ids.flatMap((id) => found.get(id) ?? []),
    missing: ids.filter((id) => !found.has(id)),
  }
}
