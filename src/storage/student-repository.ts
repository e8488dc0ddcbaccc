/**
 * Students as partners see them: only through an organisation the student is linked to.
 * Every read or change of a student's data writes its disclosure record in the same call,
 * before anything is returned to the caller.
 */
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import type { ProgressEntry } from '../domain/progress.js'
import type { TierId } from '../domain/tiers.js'
import { preparedQuery } from './prepared-query.js'
import type { WriteQueue } from './write-queue.js'
import type { Database } from './tables.js'
import { type DisclosureContext, recordDisclosure } from './disclosure-log.js'
import { recordStudentChanges } from './student-change-log.js'

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

const visibleStudentQuery = preparedQuery((db, studentId: string, organisationId: string, sandbox: number) =>
  db
    .selectFrom('students as s')
    .innerJoin('student_organisations as so', 'so.student_id', 's.id')
    .select(['s.first_name as firstName', 's.tier as tier'])
    .where('s.id', '=', studentId)
    .where('so.organisation_id', '=', organisationId)
    .where('s.sandbox', '=', sandbox),
)

const progressQuery = preparedQuery((db, studentId: string) =>
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
    .where('student_id', '=', studentId),
)

/**
 * The student and their progress, or undefined when the student is not linked to the
 * organisation (whether or not the id exists: the caller cannot tell). Two lookups rather than
 * one join: the join repeats the name and tier on every progress row, which cost more than the
 * second statement. Resolves only once the disclosure record is committed.
 */
export async function readStudentProgress(
  db: Kysely<Database>,
  writes: WriteQueue,
  studentId: string,
  context: StudentAccess,
): Promise<StudentProgress | undefined> {
  const [student] = await visibleStudentQuery(db, studentId, context.organisationId, context.sandbox ? 1 : 0)
  const rows = student === undefined ? [] : await progressQuery(db, studentId)
  await writes.statement((trx) =>
    recordDisclosure(trx, context, studentId, 'progress.read', student === undefined ? 'not_found' : 'disclosed'),
  )
  if (student === undefined) return undefined
  const entries: ProgressEntry[] = []
  for (const row of rows) {
    entries.push({
      lessonSlug: row.lessonSlug,
      status: row.status,
      xp: Number(row.xp),
      timeSeconds: Number(row.timeSeconds),
      startedAt: row.startedAt,
      completedAt: row.completedAt,
    })
  }
  return { id: studentId, firstName: student.firstName, tier: student.tier, entries }
}

export interface Enrollment {
  profileId: string
  tier: TierId
  updatedAt: string
  changed: boolean
}

const linkQuery = preparedQuery((db, studentId: string, organisationId: string, sandbox: number) =>
  db
    .selectFrom('student_organisations as so')
    .innerJoin('students as s', 's.id', 'so.student_id')
    .select('so.student_id')
    .where('so.student_id', '=', studentId)
    .where('so.organisation_id', '=', organisationId)
    .where('s.sandbox', '=', sandbox),
)

const changeTierQuery = preparedQuery((db, tier: TierId, updatedAt: string, studentId: string) =>
  db
    .updateTable('students')
    .set({ tier, tier_updated_at: updatedAt, updated_at: updatedAt })
    .where('id', '=', studentId)
    .where('tier', '<>', tier)
    .returning(['tier', 'tier_updated_at']),
)

const tierQuery = preparedQuery((db, studentId: string) =>
  db.selectFrom('students').select(['tier', 'tier_updated_at']).where('id', '=', studentId),
)

/**
 * Sets a student's tier. Setting the tier the student already has changes nothing and returns
 * the stored time, so a retried request is harmless. The conditional update makes concurrent
 * enrolls serialise on the student's row: the last one wins, and tier and time stay paired.
 * A change goes to the student change log; setting the same tier again logs nothing.
 * Resolves once the change, its log entry and its disclosure record are committed together.
 */
export async function enrollStudent(
  writes: WriteQueue,
  studentId: string,
  tier: TierId,
  context: StudentAccess,
  now: number,
): Promise<Enrollment | undefined> {
  return writes.transaction(async (trx) => {
    const [link] = await linkQuery(trx, studentId, context.organisationId, context.sandbox ? 1 : 0)
    if (link === undefined) {
      await recordDisclosure(trx, context, studentId, 'enroll', 'not_found')
      return undefined
    }
    const at = isoAt(now)
    const [updated] = await changeTierQuery(trx, tier, at, studentId)
    const current = updated ?? (await tierQuery(trx, studentId))[0]!
    await recordDisclosure(trx, context, studentId, 'enroll', updated === undefined ? 'unchanged' : 'updated')
    // Last: the change log's counter is held from here to the commit.
    if (updated !== undefined)
      await recordStudentChanges(trx, [{ type: 'tier_changed', studentId, tier: updated.tier, changedAt: at }])
    return {
      profileId: studentId,
      tier: current.tier,
      updatedAt: current.tier_updated_at,
      changed: updated !== undefined,
    }
  })
}
