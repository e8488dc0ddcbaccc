/**
 * Bulk writes for student imports: students, their organisation links (held by list shares,
 * shares.ts), their progress.
 * Callers validate every row first and call these inside one transaction, so an import is
 * all or nothing. Rows are written in multi-row statements to keep large imports fast.
 * Tier and progress changes are appended to the student change log in the same transaction
 * (student-change-log.ts), after every row of the call is written, which is why each call runs
 * in one even when the caller has none. A caller that writes more rows other writers may also
 * lock (students, progress) after one of these, in the same transaction, risks a deadlock on
 * PostgreSQL: write those first.
 */
import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { sql } from 'kysely'
import { isoAt } from '../clock.js'
import { ConflictError } from '../domain/errors.js'
import type { ProgressEntry } from '../domain/progress.js'
import type { NewStudentChange } from '../domain/student-change.js'
import type { TierId } from '../domain/tiers.js'
import { lockOrganisations } from './share-lock-repository.js'
import { holdStudents } from './share-repository.js'
import { recordStudentChanges } from './student-change-log.js'
import { newStudentRow } from './student-repository.js'
import { announceStudentChanges } from './webhook-repository.js'
import type { Database } from './tables.js'
import { inTransaction } from './transaction.js'

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
 * Writes `rows` a batch at a time in one transaction; the changes each batch's `write` returns
 * are announced and logged after every row is written (see recordStudentChanges).
 */
async function writeLogged<T>(
  db: Kysely<Database>,
  rows: readonly T[],
  at: string,
  progress: Progress | undefined,
  write: (trx: Kysely<Database>, batch: T[]) => Promise<NewStudentChange[]>,
): Promise<void> {
  await inTransaction(db, async (trx) => {
    const changes: NewStudentChange[] = []
    let done = 0
    for (const batch of batches(rows)) {
      changes.push(...(await write(trx, batch)))
      progress?.((done += batch.length))
    }
    await announceStudentChanges(trx, changes, Date.parse(at))
    await recordStudentChanges(trx, changes)
  })
}

/**
 * Inserts new students; for existing ones updates the name and, if it changed, the tier and its
 * time. A sandbox (synthetic) student is never updated: an import is for real children, and
 * writing a real name into a sandbox row would show it to test keys, which need no agreement.
 * Importers refuse such rows beforehand (see `storedStudents`); this is the last guard.
 *
 * A new student's tier and every changed tier go to the change log, in the same transaction.
 * Which rows those are is read from what the upsert returns: `tier_updated_at` becomes this
 * import's time exactly when the row is new or its tier changed (RETURNING shows only the new
 * row on both engines, so the old tier cannot be compared there; reading it beforehand could
 * miss an enroll committed in between).
 */
export async function upsertStudents(
  db: Kysely<Database>,
  rows: readonly StudentImportRow[],
  now: number,
  progress?: Progress,
): Promise<void> {
  const at = isoAt(now)
  const ifTierChanged = (column: 'tier_updated_at' | 'updated_at') =>
    sql<string>`case when students.tier <> excluded.tier
      then excluded.${sql.ref(column)} else students.${sql.ref(column)} end`
  await writeLogged(db, rows, at, progress, async (trx, batch) => {
    const written = await trx
      .insertInto('students')
      .values(batch.map((row) => newStudentRow(row, at, 0)))
      .onConflict((oc) =>
        oc
          .column('id')
          .doUpdateSet({
            first_name: (eb) => eb.ref('excluded.first_name'),
            tier_updated_at: ifTierChanged('tier_updated_at'),
            updated_at: ifTierChanged('updated_at'),
            tier: (eb) => eb.ref('excluded.tier'),
          })
          .where('students.sandbox', '=', 0),
      )
      .returning(['id', 'tier', 'tier_updated_at'])
      .execute()
    return written
      .filter((row) => row.tier_updated_at === at)
      .map((row): NewStudentChange => ({ type: 'tier_changed', studentId: row.id, tier: row.tier, changedAt: at }))
  })
}

/** Where an import's links to partner organisations go: one list share per organisation. */
export interface LinkShares {
  /** The shares' label: an import's file name. */
  label: string
  /** Who made them: `cli:<user>`. */
  createdBy: string | null
  /** Each organisation's share, kept across calls so that every batch of one import adds to the same one. */
  byOrganisation: Map<string, string>
}

/** Shares for one import, made as its rows reach each organisation. */
export function importShares(label: string, createdBy: string | null): LinkShares {
  return { label, createdBy, byOrganisation: new Map() }
}

/**
 * Links students to organisations; a link that exists already is kept as it is. A link to a
 * partner organisation is held by a list share (shares.ts): `shares`, or by default one share per
 * organisation for this call. A sandbox organisation's links belong to no share: its students are
 * synthetic and come and go with it.
 *
 * A sandbox organisation holds synthetic students only and a partner organisation real ones, so a
 * link across (a real child where anyone who signs up experiments) is refused with ConflictError
 * and nothing of the call is written. Importers refuse such rows beforehand, with their line;
 * this is the last guard.
 */
export async function linkStudents(
  db: Kysely<Database>,
  rows: readonly LinkImportRow[],
  now: number,
  progress?: Progress,
  shares: LinkShares = importShares('Linked by import', null),
): Promise<void> {
  const at = isoAt(now)
  let done = 0
  await inTransaction(db, async (trx) => {
    for (const batch of batches(rows)) {
      const sandboxes = await refuseCrossedLinks(trx, batch)
      const partners = [...new Set(batch.map((row) => row.organisationId))].filter((id) => !sandboxes.has(id))
      await lockOrganisations(trx, partners)
      for (const organisationId of partners) {
        const shareId = await importShare(trx, shares, organisationId, at)
        const students = batch.filter((row) => row.organisationId === organisationId).map((row) => row.studentId)
        await holdStudents(trx, { id: shareId, organisationId }, students, now)
      }
      const synthetic = batch.filter((row) => sandboxes.has(row.organisationId))
      if (synthetic.length > 0)
        await trx
          .insertInto('student_organisations')
          .values(
            synthetic.map((row) => ({
              student_id: row.studentId,
              organisation_id: row.organisationId,
              created_at: at,
            })),
          )
          .onConflict((oc) => oc.columns(['student_id', 'organisation_id']).doNothing())
          .execute()
      progress?.((done += batch.length))
    }
  })
}

/** The organisation's share of this import, made by the first batch that reaches it. */
async function importShare(trx: Kysely<Database>, shares: LinkShares, organisationId: string, at: string) {
  let id = shares.byOrganisation.get(organisationId)
  if (id === undefined) {
    id = randomUUID()
    shares.byOrganisation.set(organisationId, id)
  }
  await trx
    .insertInto('shares')
    .values({
      id,
      organisation_id: organisationId,
      kind: 'list',
      school_id: null,
      label: shares.label,
      created_at: at,
      created_by: shares.createdBy,
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute()
  const share = await trx.selectFrom('shares').select('ended_at').where('id', '=', id).executeTakeFirstOrThrow()
  // Its rows would hold links no share in force holds.
  if (share.ended_at !== null) throw new ConflictError(`share ${id} of this import was ended while it ran`)
  return id
}

/** The sandbox organisations among the rows', after refusing any link across (see linkStudents). */
async function refuseCrossedLinks(db: Kysely<Database>, rows: readonly LinkImportRow[]): Promise<Set<string>> {
  const organisations = [...new Set(rows.map((row) => row.organisationId))]
  const sandboxes = new Set(
    (
      await db
        .selectFrom('organisations')
        .select('id')
        .where('id', 'in', organisations)
        .where('kind', '=', 'sandbox')
        .execute()
    ).map((row) => row.id),
  )
  const students = await storedStudents(db, [...new Set(rows.map((row) => row.studentId))])
  for (const row of rows) {
    // A student or organisation that does not exist fails an insert's foreign key instead.
    const student = students.get(row.studentId)
    if (student !== undefined && student.sandbox !== sandboxes.has(row.organisationId))
      throw new ConflictError(
        student.sandbox
          ? `student ${row.studentId} is a sandbox (synthetic) student and ` +
              `organisation ${row.organisationId} is not a sandbox`
          : `organisation ${row.organisationId} is a sandbox, which holds synthetic students only, ` +
              `and student ${row.studentId} is real`,
      )
  }
  return sandboxes
}

/**
 * Adds or replaces progress entries. Entries that are new or differ from the stored ones go to
 * the change log, with their students' `updated_at`, in the same transaction; an entry written
 * again unchanged changes nothing, so running an import twice logs nothing the second time.
 */
export async function upsertProgress(
  db: Kysely<Database>,
  rows: readonly ProgressImportRow[],
  now: number,
  progress?: Progress,
): Promise<void> {
  const at = isoAt(now)
  await writeLogged(db, rows, at, progress, async (trx, batch) => {
    const written = await trx
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
        oc
          .columns(['student_id', 'lesson_slug'])
          .doUpdateSet({
            status: (eb) => eb.ref('excluded.status'),
            xp: (eb) => eb.ref('excluded.xp'),
            time_seconds: (eb) => eb.ref('excluded.time_seconds'),
            started_at: (eb) => eb.ref('excluded.started_at'),
            completed_at: (eb) => eb.ref('excluded.completed_at'),
          })
          .where(
            sql<boolean>`progress.status <> excluded.status or progress.xp <> excluded.xp
                or progress.time_seconds <> excluded.time_seconds or progress.started_at <> excluded.started_at
                or progress.completed_at is distinct from excluded.completed_at`,
          ),
      )
      .returning(['student_id', 'lesson_slug', 'status', 'xp', 'time_seconds', 'started_at', 'completed_at'])
      .execute()
    if (written.length > 0) {
      const students = [...new Set(written.map((row) => row.student_id))]
      await trx.updateTable('students').set({ updated_at: at }).where('id', 'in', students).execute()
    }
    return written.map(
      (row): NewStudentChange => ({
        type: 'progress_updated',
        studentId: row.student_id,
        entry: {
          lessonSlug: row.lesson_slug,
          status: row.status,
          xp: Number(row.xp),
          timeSeconds: Number(row.time_seconds),
          startedAt: row.started_at,
          completedAt: row.completed_at,
        },
        changedAt: at,
      }),
    )
  })
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
