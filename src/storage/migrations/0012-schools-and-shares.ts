import { randomUUID } from 'node:crypto'
import { type Kysely, sql } from 'kysely'

/**
 * Schools, and links made on purpose (cases/shares.ts, cases/school-attendance.ts).
 *
 * `schools`: what the operator sees of a district's schools, from a OneRoster `orgs.csv`
 * (`external_id` is the org's sourcedId) or created by hand. `students.external_id` is the
 * student's sourcedId in the district's system; both are unique where present.
 * `student_schools`: which schools each student attends.
 *
 * `shares`: why an organisation sees students, a school (its students present and future) or a
 * list of ids; `ended_at` once the operator ends it. `share_students` holds each share's students,
 * so a link (`student_organisations`) exists exactly while some share of the organisation
 * holds its student. Links made before shares existed are put into one list share per partner
 * organisation, named so; sandbox links are synthetic and belong to no share.
 */
export async function up(db: Kysely<any>, now: string): Promise<void> {
  await db.schema
    .createTable('schools')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('external_id', 'text')
    .addColumn('identifier', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('schools_external_id').on('schools').column('external_id').unique().execute()

  await db.schema.alterTable('students').addColumn('external_id', 'text').execute()
  await db.schema.createIndex('students_external_id').on('students').column('external_id').unique().execute()

  await db.schema
    .createTable('student_schools')
    .addColumn('student_id', 'text', (c) => c.notNull().references('students.id'))
    .addColumn('school_id', 'text', (c) => c.notNull().references('schools.id'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('student_schools_pk', ['student_id', 'school_id'])
    .execute()
  await db.schema
    .createIndex('student_schools_school')
    .on('student_schools')
    .columns(['school_id', 'student_id'])
    .execute()

  await db.schema
    .createTable('shares')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('school_id', 'text', (c) => c.references('schools.id'))
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text')
    .addColumn('ended_at', 'text')
    .execute()
  await db.schema.createIndex('shares_organisation').on('shares').columns(['organisation_id', 'created_at']).execute()
  await sql`create index shares_school on shares (school_id) where ended_at is null and school_id is not null`.execute(
    db,
  )

  await db.schema
    .createTable('share_students')
    .addColumn('share_id', 'text', (c) => c.notNull().references('shares.id'))
    .addColumn('student_id', 'text', (c) => c.notNull().references('students.id'))
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('share_students_pk', ['share_id', 'student_id'])
    .execute()
  await db.schema
    .createIndex('share_students_link')
    .on('share_students')
    .columns(['student_id', 'organisation_id'])
    .execute()

  const organisations = await db
    .selectFrom('student_organisations as so')
    .innerJoin('organisations as o', 'o.id', 'so.organisation_id')
    .select('o.id')
    .where('o.kind', '=', 'partner')
    .distinct()
    .execute()
  for (const { id } of organisations as { id: string }[]) {
    const shareId = randomUUID()
    await db
      .insertInto('shares')
      .values({
        id: shareId,
        organisation_id: id,
        kind: 'list',
        school_id: null,
        label: 'Linked before shares',
        created_at: now,
        created_by: 'migration',
      })
      .execute()
    await sql`insert into share_students (share_id, student_id, organisation_id)
      select ${shareId}, student_id, organisation_id from student_organisations where organisation_id = ${id}`.execute(
      db,
    )
  }
}
