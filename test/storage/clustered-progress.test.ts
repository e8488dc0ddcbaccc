/**
 * Migration 0008: on SQLite `progress` becomes a table clustered on (student, lesson), WITHOUT
 * ROWID; its rows, its key and its foreign key stay as they were. PostgreSQL is left as it is.
 */
import { type Kysely, sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { migrateBesideOtherTests, openTestStorage } from '../helper.js'
import { perTest } from '../support/built.js'

const at = (minutes: number) => new Date(Date.parse('2026-03-01T00:00:00.000Z') + minutes * 60_000).toISOString()
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`

describe('clustered progress (migration 0008)', () => {
  const storage = perTest(async () => openTestStorage())

  it('keeps every row, the key and the foreign key, and reads a student through the key alone', async () => {
    await migrateBesideOtherTests(storage, '0007-webhooks')
    const db = storage.db as unknown as Kysely<Record<string, Record<string, unknown>>>
    await db
      .insertInto('students')
      .values(
        [1, 2, 3].map((n) => ({
          id: uuid(n),
          first_name: 'Sam',
          tier: 'explorer',
          tier_updated_at: at(0),
          created_at: at(0),
        })),
      )
      .execute()
    // Inserted out of key order, as imports and enrolls over time leave them.
    const rows = [3, 1, 2, 1, 3, 2].map((student, i) => ({
      student_id: uuid(student),
      lesson_slug: `explorer/e${i}-lesson`,
      status: i % 2 === 0 ? 'completed' : 'in_progress',
      xp: 10 * i,
      time_seconds: 60 + i,
      started_at: at(i),
      completed_at: i % 2 === 0 ? at(i + 1) : null,
    }))
    await db.insertInto('progress').values(rows).execute()
    const read = () => db.selectFrom('progress').selectAll().orderBy('student_id').orderBy('lesson_slug').execute()
    const before = await read()
    expect(before).toHaveLength(6)

    await migrateBesideOtherTests(storage)
    expect(await read()).toEqual(before)
    // The key still refuses a second entry for the same lesson, and the foreign key an unknown student.
    await expect(db.insertInto('progress').values(rows[0]!).execute()).rejects.toThrow(/UNIQUE|unique|duplicate/)
    await expect(
      db
        .insertInto('progress')
        .values({ ...rows[0]!, student_id: uuid(9) })
        .execute(),
    ).rejects.toThrow(/FOREIGN KEY|foreign key/)
    if (storage.engine !== 'sqlite') return
    const { rows: tables } = await sql<{ sql: string }>`select sql from sqlite_master where name = 'progress'`.execute(
      storage.db,
    )
    expect(tables[0]!.sql).toMatch(/without rowid\s*$/i)
    const { rows: plan } = await sql<{ detail: string }>`explain query plan
      select lesson_slug, xp from progress where student_id = ${uuid(1)}`.execute(storage.db)
    expect(plan.map((step) => step.detail)).toEqual(['SEARCH progress USING PRIMARY KEY (student_id=?)'])
  })
})
