/**
 * Migration 0012 over data written under 0011: the links made before shares existed are put into
 * one list share per partner organisation, "Linked before shares", holding exactly those links;
 * a sandbox's synthetic links belong to no share; and ending that share unlinks its students.
 */
import type { Kysely } from 'kysely'
import { describe, expect, it } from 'vitest'
import { listShares } from '../../src/storage/share-listing-repository.js'
import { endShare } from '../../src/cases/shares.js'
import { migrateBesideOtherTests, openTestStorage } from '../helper.js'
import { expectSharesHoldEveryLink } from '../support/share-invariant.js'
import { studentIdsOf } from '../support/linked-students.js'
import { perTest } from '../support/built.js'

const T0 = Date.parse('2026-01-31T00:00:00.000Z')
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`

describe('migration 0012 over links made before shares', () => {
  const storage = perTest(async () => openTestStorage())

  it('puts each partner organisation’s links into one list share, and no sandbox’s', async () => {
    await migrateBesideOtherTests(storage, '0011-agreement-terms')
    // Rows as the code of 0011 wrote them; its repository functions now write 0012's tables too.
    const db = storage.db as unknown as Kysely<Record<string, Record<string, unknown>>>
    const at = new Date(T0).toISOString()
    const organisations = [
      { id: uuid(101), name: 'Acme Learning', kind: 'partner' },
      { id: uuid(102), name: 'Beta Tutors', kind: 'partner' },
      { id: uuid(103), name: 'Gamma Apps', kind: 'partner' },
      { id: uuid(104), name: 'Sandbox: dev@example.org', kind: 'sandbox' },
    ]
    await db
      .insertInto('organisations')
      .values(organisations.map((o) => ({ ...o, status: 'active', created_at: at })))
      .execute()
    await db
      .insertInto('students')
      .values(
        [1, 2, 3, 4].map((n) => ({
          id: uuid(n),
          first_name: `S${n}`,
          tier: 'explorer',
          tier_updated_at: at,
          created_at: at,
          sandbox: n === 4 ? 1 : 0,
        })),
      )
      .execute()
    const links: [number, number][] = [
      [1, 101],
      [2, 101],
      [2, 102],
      [3, 102],
      [4, 104],
    ]
    await db
      .insertInto('student_organisations')
      .values(links.map(([s, o]) => ({ student_id: uuid(s), organisation_id: uuid(o), created_at: at })))
      .execute()

    await migrateBesideOtherTests(storage)

    const held = (organisationId: string) => studentIdsOf(storage.db, organisationId, 'share_students')
    for (const [organisation, students] of [
      [uuid(101), [uuid(1), uuid(2)]],
      [uuid(102), [uuid(2), uuid(3)]],
    ] as const) {
      const shares = await listShares(storage.db, organisation)
      expect(shares).toEqual([
        {
          id: expect.any(String),
          kind: 'list',
          label: 'Linked before shares',
          schoolId: null,
          createdAt: expect.any(String),
          createdBy: 'migration',
          endedAt: null,
          students: 2,
        },
      ])
      expect(await held(organisation)).toEqual(students)
    }
    // No link, no share; a sandbox's links are its own.
    expect(await listShares(storage.db, uuid(103))).toEqual([])
    expect(await listShares(storage.db, uuid(104))).toEqual([])
    expect(await held(uuid(104))).toEqual([])
    await expectSharesHoldEveryLink(storage.db)

    // The share is a share like any other: ending it unlinks Beta's students, and Acme keeps its own.
    const [beta] = await listShares(storage.db, uuid(102))
    const ended = await endShare(storage.db, beta!.id, T0 + 60_000)
    expect(ended.unlinked.map((link) => link.studentId).sort()).toEqual([uuid(2), uuid(3)])
    expect(await held(uuid(101))).toEqual([uuid(1), uuid(2)])
    await expectSharesHoldEveryLink(storage.db)
  })
})
