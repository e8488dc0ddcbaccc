/**
 * The student change log: numbers without gaps, given with the rows in one transaction (a
 * rollback takes both back), the existing data logged by the migration, and pages that scan a
 * bounded window of numbers yet never skip a change.
 */
import { sql } from 'kysely'
import { afterEach, describe, expect, it } from 'vitest'
import { openStorage, type Storage } from '../../src/storage/connection.js'
import { createOrganisation } from '../../src/storage/access-repository.js'
import {
  lastChangeSequence,
  pageStudentChanges,
  recordStudentChanges,
  type StudentChange,
} from '../../src/storage/student-change-log.js'
import { linkStudents, upsertStudents } from '../../src/storage/student-import-repository.js'
import { inTransaction } from '../../src/storage/transaction.js'
import { createTestStorage, freshDatabaseUrl, migrateBesideOtherTests } from '../helper.js'

const T0 = Date.parse('2026-03-01T00:00:00.000Z')
const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString()
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`

describe('student change log', () => {
  let storage: Storage | undefined
  afterEach(async () => {
    await storage?.close()
    storage = undefined
  })

  it('numbers changes from 1 without gaps, and a rolled-back transaction takes its numbers back', async () => {
    storage = await createTestStorage({ catalog: false })
    const db = storage.db
    expect(await lastChangeSequence(db)).toBe(0)
    const change = (n: number) => ({
      type: 'tier_changed' as const,
      studentId: uuid(n),
      tier: 'builder' as const,
      changedAt: at(n),
    })
    await inTransaction(db, (trx) => recordStudentChanges(trx, [change(1), change(2)]))
    await expect(
      inTransaction(db, async (trx) => {
        await recordStudentChanges(trx, [change(3)])
        throw new Error('undone')
      }),
    ).rejects.toThrow('undone')
    await inTransaction(db, (trx) => recordStudentChanges(trx, [change(4)]))
    const rows = await db.selectFrom('student_changes').select(['seq', 'student_id']).orderBy('seq').execute()
    expect(rows.map((row) => [Number(row.seq), row.student_id])).toEqual([
      [1, uuid(1)],
      [2, uuid(2)],
      [3, uuid(4)],
    ])
    expect(await lastChangeSequence(db)).toBe(3)
    // Outside a transaction the counter would commit before the rows: refused.
    await expect(recordStudentChanges(db, [change(5)])).rejects.toThrow('inside the transaction')
  })

  it('pages through a window of numbers at a time and still returns every visible change once', async () => {
    storage = await createTestStorage({ catalog: false })
    const db = storage.db
    const ours = await createOrganisation(db, 'Ours', T0)
    const theirs = await createOrganisation(db, 'Theirs', T0)
    // 40 students, one change each (tier set on import); every third is ours.
    const students = Array.from({ length: 40 }, (_, i) => ({ id: uuid(i + 1), firstName: `S${i}`, tier: 'explorer' }))
    for (const student of students) await upsertStudents(db, [{ ...student, tier: 'explorer' }], T0)
    await linkStudents(
      db,
      students.map((student, i) => ({ studentId: student.id, organisationId: i % 3 === 0 ? ours.id : theirs.id })),
      T0,
    )
    const reader = { organisationId: ours.id, sandbox: false }
    const expected = students.filter((_, i) => i % 3 === 0).map((student) => student.id)
    for (const [limit, window] of [
      [100, 5],
      [2, 5],
      [1, 1],
      [3, 100],
    ] as const) {
      const seen: StudentChange[] = []
      let after = 0
      let pages = 0
      for (;;) {
        const page = (await pageStudentChanges(db, reader, after, limit, window))!
        expect(page.changes.length).toBeLessThanOrEqual(limit)
        expect(page.next).toBeGreaterThanOrEqual(after)
        seen.push(...page.changes)
        after = page.next
        pages++
        if (!page.hasMore) break
      }
      expect(
        seen.map((change) => change.studentId),
        `limit ${limit}, window ${window}`,
      ).toEqual(expected)
      expect(after).toBe(40)
      if (window === 5) expect(pages).toBeGreaterThanOrEqual(8)
    }
    expect(await pageStudentChanges(db, reader, 41, 10)).toBeUndefined()
    expect(await pageStudentChanges(db, reader, 'now', 10)).toEqual({ changes: [], next: 40, hasMore: false })
  })

  it('logs the data stored before it existed: every tier, then every progress entry, in time order', async () => {
    const url = freshDatabaseUrl()
    storage = openStorage(url)
    const opened = storage
    storage = {
      ...opened,
      async close() {
        if (opened.schema !== undefined)
          await sql`drop schema if exists ${sql.id(opened.schema)} cascade`.execute(opened.db)
        await opened.close()
      },
    }
    await migrateBesideOtherTests(opened, '0005-disclosure-segments')
    const db = opened.db as unknown as import('kysely').Kysely<Record<string, Record<string, unknown>>>
    await db
      .insertInto('students')
      .values([
        { id: uuid(1), first_name: 'Ada', tier: 'builder', tier_updated_at: at(10), created_at: at(0) },
        { id: uuid(2), first_name: 'Ben', tier: 'explorer', tier_updated_at: at(0), created_at: at(0) },
      ])
      .execute()
    const entry = (student: number, slug: string, started: number, completed: number | null) => ({
      student_id: uuid(student),
      lesson_slug: slug,
      status: completed === null ? 'in_progress' : 'completed',
      xp: 10,
      time_seconds: 60,
      started_at: at(started),
      completed_at: completed === null ? null : at(completed),
    })
    await db
      .insertInto('progress')
      .values([entry(1, 'explorer/e1-a', 1, 2), entry(2, 'explorer/e1-a', 3, null), entry(1, 'builder/b1-a', 20, null)])
      .execute()
    await migrateBesideOtherTests(opened)
    const rows = await opened.db
      .selectFrom('student_changes')
      .select(['seq', 'kind', 'student_id', 'changed_at', 'tier', 'lesson_slug'])
      .orderBy('seq')
      .execute()
    expect(
      rows.map((row) => [Number(row.seq), row.kind, row.student_id, row.changed_at, row.tier ?? row.lesson_slug]),
    ).toEqual([
      [1, 'tier_changed', uuid(2), at(0), 'explorer'],
      [2, 'progress_updated', uuid(1), at(2), 'explorer/e1-a'],
      [3, 'progress_updated', uuid(2), at(3), 'explorer/e1-a'],
      [4, 'tier_changed', uuid(1), at(10), 'builder'],
      [5, 'progress_updated', uuid(1), at(20), 'builder/b1-a'],
    ])
    expect(await lastChangeSequence(opened.db)).toBe(5)
    const students = await opened.db.selectFrom('students').select(['id', 'updated_at']).orderBy('id').execute()
    expect(students).toEqual([
      { id: uuid(1), updated_at: at(20) },
      { id: uuid(2), updated_at: at(3) },
    ])
    // The next change continues the numbering.
    await inTransaction(opened.db, (trx) =>
      recordStudentChanges(trx, [{ type: 'tier_changed', studentId: uuid(2), tier: 'innovator', changedAt: at(30) }]),
    )
    expect(await lastChangeSequence(opened.db)).toBe(6)
  })
})
