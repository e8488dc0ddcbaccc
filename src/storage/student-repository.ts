/**
 * Students as partners see them: only through an organisation the student is linked to. The
 * queries only; the progress read and the enroll that record each disclosure are cases
 * (cases/progress-read.ts, cases/enroll.ts).
 */
import { type Kysely, PostgresAdapter, type SqlBool, sql } from 'kysely'
import type { ProgressEntry } from '../domain/progress.js'
import type { TierId } from '../domain/tiers.js'
import { preparedQuery } from './prepared-query.js'
import type { Database } from './tables.js'
import type { DisclosureContext } from './disclosure-log.js'

/** Who is asking for a student: the disclosure context, and which students the key may reach. */
export interface StudentAccess extends DisclosureContext {
  /** Test keys see only sandbox (synthetic) students; live keys only real ones. */
  readonly sandbox: boolean
}

export interface StudentProgress {
  id: string
  firstName: string
  tier: TierId
  entries: ProgressEntry[]
}

const visibleStudent = (db: Kysely<Database>, studentId: string, organisationId: string, sandbox: number) =>
  db
    .selectFrom('students as s')
    .innerJoin('student_organisations as so', 'so.student_id', 's.id')
    .select(['s.first_name as firstName', 's.tier as tier'])
    .where('s.id', '=', studentId)
    .where('so.organisation_id', '=', organisationId)
    .where('s.sandbox', '=', sandbox)

/** The columns in this order: the synchronous path's JSON arrays hold them so. */
const progressOf = (db: Kysely<Database>, studentId: string) =>
  db
    .selectFrom('progress')
    .select([
      'lesson_slug as lessonSlug',
      'status',
      'xp',
      'time_seconds as timeSeconds',
      'started_at as startedAt',
      'completed_at as completedAt',
    ])
    .where('student_id', '=', studentId)

const visibleStudentQuery = preparedQuery(visibleStudent)
const progressQuery = preparedQuery(progressOf)

/** A progress row as read, in the column order of `progressOf`. */
export type ProgressTuple = [string, ProgressEntry['status'], number, number, string, string | null]

/** A student's name, tier and stored progress rows, as read for one organisation. */
export interface StudentRows {
  firstName: string
  tier: TierId
  rows: ProgressTuple[]
  /**
   * Whether every string of the rows is printable ASCII with nothing to escape in JSON (true for
   * the slugs and times the service stores; known only on the synchronous path, false elsewhere):
   * such rows can be written into a body as they are (progress-body.ts).
   */
  plain: boolean
}

/**
 * Reads that answer synchronously, for the hottest request (SQLite on a file:
 * sqlite/sync-reader.ts): the async layers of a Kysely call cost more than the lookups
 * themselves. A read sees only committed data.
 */
export interface SyncReader {
  /** The student and their progress rows, as `organisationId` sees them; undefined when it does not. */
  studentRows(studentId: string, organisationId: string, sandbox: number): StudentRows | undefined
}

/**
 * The student and their progress rows, read synchronously when there is a reader, or undefined
 * when the student is not linked to the organisation (whether or not the id exists: the caller
 * cannot tell). Two lookups rather than one join: the join repeats the name and tier on every
 * progress row, which cost more than the second statement.
 */
export async function findStudentRows(
  db: Kysely<Database>,
  reader: SyncReader | undefined,
  studentId: string,
  context: StudentAccess,
): Promise<StudentRows | undefined> {
  const sandbox = context.sandbox ? 1 : 0
  if (reader !== undefined) return reader.studentRows(studentId, context.organisationId, sandbox)
  const [student] = await visibleStudentQuery(db, studentId, context.organisationId, sandbox)
  if (student === undefined) return undefined
  const rows = (await progressQuery(db, studentId)).map(
    (row): ProgressTuple => [row.lessonSlug, row.status, row.xp, row.timeSeconds, row.startedAt, row.completedAt],
  )
  return { firstName: student.firstName, tier: student.tier, rows, plain: false }
}

/** The student's progress entries, made from the rows as read. */
export function progressOfRows(studentId: string, student: StudentRows): StudentProgress {
  const { rows } = student
  const entries: ProgressEntry[] = new Array(rows.length)
  for (let i = 0; i < rows.length; i++) {
    const [lessonSlug, status, xp, timeSeconds, startedAt, completedAt] = rows[i]!
    entries[i] = {
      lessonSlug,
      status,
      xp: Number(xp),
      timeSeconds: Number(timeSeconds),
      startedAt,
      completedAt,
    }
  }
  return { id: studentId, firstName: student.firstName, tier: student.tier, entries }
}

/**
 * SQLite: the change itself, when the student is linked to the organisation and has another
 * tier: one statement for the link check and the conditional update, which also says whether
 * any webhook endpoint is enabled (the change is then announced). A row back means the tier
 * changed; none, that it was unchanged or that the student is not visible (`visibleTierQuery`
 * tells which). The single writer holds the write lock from this update to the commit, so the
 * read that follows sees what the update saw.
 */
const changeTierQuery = preparedQuery(
  (db, tier: TierId, updatedAt: string, studentId: string, sandbox: number, organisationId: string) =>
    db
      .updateTable('students')
      .set({ tier, tier_updated_at: updatedAt, updated_at: updatedAt })
      .where('id', '=', studentId)
      .where('tier', '<>', tier)
      .where('sandbox', '=', sandbox)
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom('student_organisations as so')
            .select('so.student_id')
            .whereRef('so.student_id', '=', 'students.id')
            .where('so.organisation_id', '=', organisationId),
        ),
      )
      .returning((eb) => [
        'tier',
        'tier_updated_at',
        eb
          .exists(eb.selectFrom('webhook_endpoints').select('id').where('status', '=', sql.lit('enabled')))
          .as('announce'),
      ]),
)

/**
 * PostgreSQL: the whole decision in one statement. The student's row is locked first (the lock
 * an UPDATE takes), so an enroll waits for one in progress and then reads the tier it committed;
 * the update follows only if that tier differs. An update conditioned on the tier alone skipped
 * the row at READ COMMITTED without waiting for its lock, and a read in a fresh snapshot then
 * took the other enroll's tier for "unchanged". A row back means the student is visible, with
 * the tier and time it had when locked; none, that it is not.
 */
const lockAndChangeTierQuery = preparedQuery(
  (db, tier: TierId, updatedAt: string, studentId: string, sandbox: number, organisationId: string) =>
    db
      .with(
        (cte) => cte('locked').materialized(),
        (db) =>
          db
            .selectFrom('students as s')
            .select(['s.id', 's.tier', 's.tier_updated_at'])
            .where('s.id', '=', studentId)
            .where('s.sandbox', '=', sandbox)
            .where((eb) =>
              eb.exists(
                eb
                  .selectFrom('student_organisations as so')
                  .select('so.student_id')
                  .whereRef('so.student_id', '=', 's.id')
                  .where('so.organisation_id', '=', organisationId),
              ),
            )
            .forNoKeyUpdate(),
      )
      .with('changed', (db) =>
        db
          .updateTable('students')
          .from('locked')
          .set({ tier, tier_updated_at: updatedAt, updated_at: updatedAt })
          .whereRef('students.id', '=', 'locked.id')
          .where('locked.tier', '<>', tier)
          .returning('students.id'),
      )
      .selectFrom('locked')
      .select((eb) => [
        'locked.tier',
        'locked.tier_updated_at',
        eb.exists(eb.selectFrom('changed').select('changed.id')).as('changed'),
        eb
          .exists(eb.selectFrom('webhook_endpoints').select('id').where('status', '=', sql.lit('enabled')))
          .as('announce'),
      ]),
)

/** The tier of a student the organisation can see; none for any other id. */
const visibleTierQuery = preparedQuery((db, studentId: string, organisationId: string, sandbox: number) =>
  db
    .selectFrom('students as s')
    .innerJoin('student_organisations as so', 'so.student_id', 's.id')
    .select(['s.tier', 's.tier_updated_at'])
    .where('s.id', '=', studentId)
    .where('so.organisation_id', '=', organisationId)
    .where('s.sandbox', '=', sandbox),
)

/**
 * What an enroll found: the tier and time stored before any change, whether it changed the tier,
 * and whether to announce that.
 */
export interface TierDecision {
  tier: TierId
  tier_updated_at: string
  // PostgreSQL answers true or false, SQLite 1 or 0.
  changed: SqlBool
  announce: SqlBool
}

/**
 * An enroll's decision (TierDecision), the tier changed when it differed; undefined when the
 * student is not visible to the organisation.
 */
export async function changeTier(
  trx: Kysely<Database>,
  tier: TierId,
  at: string,
  studentId: string,
  sandbox: number,
  organisationId: string,
): Promise<TierDecision | undefined> {
  if (trx.getExecutor().adapter instanceof PostgresAdapter)
    return (await lockAndChangeTierQuery(trx, tier, at, studentId, sandbox, organisationId))[0]
  const [updated] = await changeTierQuery(trx, tier, at, studentId, sandbox, organisationId)
  // Objects written out rather than spread from the rows: a spread made an unchanged enroll slower.
  if (updated !== undefined)
    return { tier: updated.tier, tier_updated_at: updated.tier_updated_at, changed: true, announce: updated.announce }
  const [current] = await visibleTierQuery(trx, studentId, organisationId, sandbox)
  return current === undefined
    ? undefined
    : { tier: current.tier, tier_updated_at: current.tier_updated_at, changed: false, announce: false }
}

/** A new student's row: its tier and the row itself date from `at`. */
export function newStudentRow(student: { id: string; firstName: string; tier: TierId }, at: string, sandbox: 0 | 1) {
  return {
    id: student.id,
    first_name: student.firstName,
    tier: student.tier,
    tier_updated_at: at,
    updated_at: at,
    created_at: at,
    sandbox,
  }
}
