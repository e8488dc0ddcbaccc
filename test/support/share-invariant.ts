/**
 * The rule shares keep (storage/share-repository.ts): a link to a partner organisation exists exactly while
 * some share of it in force holds the student, and an ended share holds nobody. Tests call this
 * after each change they make.
 */
import type { Kysely } from 'kysely'
import { expect } from 'vitest'
import type { Database } from '../../src/storage/tables.js'

export async function expectSharesHoldEveryLink(db: Kysely<Database>): Promise<void> {
  const links = await db
    .selectFrom('student_organisations as so')
    .innerJoin('organisations as o', 'o.id', 'so.organisation_id')
    .select(['so.student_id', 'so.organisation_id'])
    .where('o.kind', '=', 'partner')
    .execute()
  const held = await db
    .selectFrom('share_students as ss')
    .innerJoin('shares as sh', 'sh.id', 'ss.share_id')
    .select(['ss.student_id', 'ss.organisation_id'])
    .where('sh.ended_at', 'is', null)
    .distinct()
    .execute()
  const pairs = (rows: { student_id: string; organisation_id: string }[]) =>
    rows.map((row) => `${row.student_id} ${row.organisation_id}`).sort()
  expect(pairs(held), 'links held by shares in force').toEqual(pairs(links))
  const ended = await db
    .selectFrom('share_students as ss')
    .innerJoin('shares as sh', 'sh.id', 'ss.share_id')
    .select('ss.share_id')
    .where('sh.ended_at', 'is not', null)
    .execute()
  expect(ended, 'rows of ended shares').toEqual([])
  const mismatched = await db
    .selectFrom('share_students as ss')
    .innerJoin('shares as sh', 'sh.id', 'ss.share_id')
    .select('ss.share_id')
    .whereRef('ss.organisation_id', '<>', 'sh.organisation_id')
    .execute()
  expect(mismatched, "rows naming another organisation than their share's").toEqual([])
}
