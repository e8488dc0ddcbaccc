/**
 * Bulk writes for student imports: students, their organisation links, their progress.
 * Callers validate every row first and call these inside one transaction, so an import is
 * all or nothing. Rows are written in multi-row statements to keep large imports fast.
 */
import type { Kysely } from 'kysely'
import { sql } from 'kysely'
import { isoAt } from '../clock.js'
import type { ProgressEntry } from '../domain/progress.js'
import type { TierId } from '../domain/tiers.js'
import type { Database } from './tables.js'

/** Rows per statement: under SQLite's and PostgreSQL's bound-parameter limits for every table here. */
const BATCH = 500

export interface StudentImportRow {
  id: string
  firstName: string
  tier: TierId
}

export interface LinkImportRow {
  studentId: string
  organisationId: string
}

/** A progress entry as the API shows it, plus whose it is. */
export interface ProgressImportRow extends ProgressEntry {
  studentId: string
}

function* batches<T>(rows: readonly T[]): Generator<T[]> {
  for (let i = 0; i < rows.length; i += BATCH) yield rows.slice(i, i + BATCH)
}

export type Progress = (done: number) => void

/**
 * Inserts new students; for existing ones updates the name and, if it changed, the tier and its
 * time. A sandbox (synthetic) student is never updated: an import is for real children, and
 * writing a real name into a sandbox row would show it to test keys, which need no agreement.
 * Importers refuse such rows beforehand (see `storedStudents`); this is the last guard.
 */
export async function upsertStudents(
  db: Kysely<Database>,
  rows: readonly StudentImportRow[],
  now: number,
  progress?: Progress,
): Promise<void> {
  const at = isoAt(now)
  let done = 0
  for (const batch of batches(rows)) {
    await db
      .insertInto('students')
      .values(
        batch.map((row) => ({
          id: row.id,
          first_name: row.firstName,
          tier: row.tier,
          tier_updated_at: at,
          created_at: at,
          sandbox: 0,
        })),
      )
      .onConflict((oc) =>
        oc
          .column('id')
          .doUpdateSet({
            first_name: (eb) => eb.ref('excluded.first_name'),
            tier_updated_at: sql<string>`case when students.tier <> excluded.tier
              then excluded.tier_updated_at else students.tier_updated_at end`,
            tier: (eb) => eb.ref('excluded.tier'),
          })
          .where('students.sandbox', '=', 0),
      )
      .execute()
    progress?.((done += batch.length))
  }
}

export async function linkStudents(
  db: Kysely<Database>,
  rows: readonly LinkImportRow[],
  now: number,
  progress?: Progress,
): Promise<void> {
  const at = isoAt(now)
  let done = 0
  for (const batch of batches(rows)) {
    await db
      .insertInto('student_organisations')
      .values(batch.map((row) => ({ student_id: row.studentId, organisation_id: row.organisationId, created_at: at })))
      .onConflict((oc) => oc.columns(['student_id', 'organisation_id']).doNothing())
      .execute()
    progress?.((done += batch.length))
  }
}

export async function upsertProgress(
  db: Kysely<Database>,
  rows: readonly ProgressImportRow[],
  progress?: Progress,
): Promise<void> {
  let done = 0
  for (const batch of batches(rows)) {
    await db
      .insertInto('progress')
      .values(
        batch.map((row) => ({
          student_id: row.studentId,
          lesson_slug: row.lessonSlug,
          status: row.status,
          xp: row.xp,
          time_seconds: row.timeSeconds,
          started_at: row.startedAt,
          completed_at: row.completedAt,
        })),
      )
      .onConflict((oc) =>
        oc.columns(['student_id', 'lesson_slug']).doUpdateSet({
          status: (eb) => eb.ref('excluded.status'),
          xp: (eb) => eb.ref('excluded.xp'),
          time_seconds: (eb) => eb.ref('excluded.time_seconds'),
          started_at: (eb) => eb.ref('excluded.started_at'),
          completed_at: (eb) => eb.ref('excluded.completed_at'),
        }),
      )
      .execute()
    progress?.((done += batch.length))
  }
}

/** The students among `ids` that are stored, by id, and whether each is a sandbox (synthetic) student. */
export async function storedStudents(
  db: Kysely<Database>,
  ids: readonly string[],
): Promise<Map<string, { sandbox: boolean }>> {
  const found = new Map<string, { sandbox: boolean }>()
  for (const batch of batches(ids)) {
    const rows = await db.selectFrom('students').select(['id', 'sandbox']).where('id', 'in', batch).execute()
    for (const row of rows) found.set(row.id, { sandbox: Number(row.sandbox) === 1 })
  }
  return found
}
