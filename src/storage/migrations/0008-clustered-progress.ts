import { type Kysely, sql } from 'kysely'
import type { Engine } from '../storage.js'

/**
 * SQLite: `progress` becomes a WITHOUT ROWID table, its rows stored in primary-key order
 * (student, lesson). A progress read then finds a student's entries side by side in the
 * primary key's own pages instead of looking each one up by rowid through the key's index,
 * which makes a progress read cheaper.
 *
 * The table is copied whole, in one transaction, once, before the server answers, in a time
 * that grows with the table (figures for both: docs/performance.md). PostgreSQL keeps its heap
 * and index (its progress reads already run within the bench's target); nothing changes there.
 */
export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  if (engine !== 'sqlite') return
  await sql`create table progress_clustered (
      student_id text not null references students (id),
      lesson_slug text not null,
      status text not null,
      xp integer not null,
      time_seconds integer not null,
      started_at text not null,
      completed_at text,
      constraint progress_pk primary key (student_id, lesson_slug)
    ) without rowid`.execute(db)
  await sql`insert into progress_clustered
      (student_id, lesson_slug, status, xp, time_seconds, started_at, completed_at)
    select student_id, lesson_slug, status, xp, time_seconds, started_at, completed_at
    from progress order by student_id, lesson_slug`.execute(db)
  await sql`drop table progress`.execute(db)
  await sql`alter table progress_clustered rename to progress`.execute(db)
}
