import { type Kysely, sql } from 'kysely'
import type { Engine } from '../storage.js'

/**
 * Roster and sync (storage/student-change-log.ts, storage/roster-repository.ts).
 *
 * `student_changes`: every change of a student's tier or of a progress entry, numbered by
 * `seq` in commit order. `seq` is not a serial: a writer takes a block of numbers from the
 * `student_changes` row of `meta` with `UPDATE ... SET version = version + n RETURNING version`
 * in the transaction that makes the change. That row stays locked until the writer commits,
 * so the next writer gets the next block only after this one is committed: numbers become
 * visible in order and without gaps, and a reader that has seen number n has seen every number
 * before it. (A PostgreSQL sequence hands numbers out at insert time, and a transaction holding
 * a lower number can commit after a reader has already seen a higher one: the reader would
 * skip it for good.) On SQLite the single writer gives the same order.
 *
 * Existing data becomes the start of the log: one `tier_changed` per student and one
 * `progress_updated` per progress row, in time order, so that `from=beginning` gives everything.
 *
 * `students.updated_at`: the time of the student's last change in the log (tier or progress),
 * shown in the roster. Nullable so that rows written without it (bulk loaders) fall back to
 * `tier_updated_at`.
 *
 * The roster pages through an organisation's students by id: an index in that order replaces
 * the one on the organisation alone.
 */
export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  const bigint = engine === 'postgres' ? 'bigint' : 'integer'
  // The change counter lives in `meta` beside the other versions; it may outgrow 32 bits.
  if (engine === 'postgres') await sql`alter table meta alter column version type bigint`.execute(db)

  await db.schema
    .createTable('student_changes')
    .addColumn('seq', bigint, (c) => c.primaryKey())
    .addColumn('student_id', 'text', (c) => c.notNull())
    // tier_changed | progress_updated
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('changed_at', 'text', (c) => c.notNull())
    // tier_changed: the tier now set.
    .addColumn('tier', 'text')
    // progress_updated: the entry as it now is.
    .addColumn('lesson_slug', 'text')
    .addColumn('status', 'text')
    .addColumn('xp', 'integer')
    .addColumn('time_seconds', 'integer')
    .addColumn('started_at', 'text')
    .addColumn('completed_at', 'text')
    .execute()

  await sql`insert into student_changes
      (seq, student_id, kind, changed_at, tier, lesson_slug, status, xp, time_seconds, started_at, completed_at)
    select row_number() over (order by changed_at, kind desc, student_id, lesson_slug),
      student_id, kind, changed_at, tier, lesson_slug, status, xp, time_seconds, started_at, completed_at
    from (
      select id as student_id, 'tier_changed' as kind, tier_updated_at as changed_at, tier,
        null as lesson_slug, null as status, null as xp, null as time_seconds, null as started_at, null as completed_at
      from students
      union all
      select student_id, 'progress_updated', coalesce(completed_at, started_at), null,
        lesson_slug, status, xp, time_seconds, started_at, completed_at
      from progress
    ) as existing`.execute(db)
  const counted = await sql<{ n: number | string }>`select count(*) as n from student_changes`.execute(db)
  await db
    .insertInto('meta')
    .values({ name: 'student_changes', version: Number(counted.rows[0]!.n) })
    .execute()

  await db.schema.alterTable('students').addColumn('updated_at', 'text').execute()
  await sql`update students set updated_at = latest.at
    from (select student_id, max(changed_at) as at from student_changes group by student_id) as latest
    where latest.student_id = students.id`.execute(db)

  await db.schema
    .createIndex('student_organisations_roster')
    .on('student_organisations')
    .columns(['organisation_id', 'student_id'])
    .execute()
  await db.schema.dropIndex('student_organisations_organisation').execute()
}
