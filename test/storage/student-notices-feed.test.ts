/**
 * Notices in the change feed: a notice is numbered with the changes, read only by the
 * organisation it is for (never by another organisation the student is still linked to), and
 * merged with the changes in number order, each once, whatever the page size and scan window.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { createOrganisation } from '../../src/storage/access-repository.js'
import { pageStudentChanges, recordStudentChanges, type StudentChange } from '../../src/storage/student-change-log.js'
import { linkStudents, upsertStudents } from '../../src/storage/student-import-repository.js'
import { inTransaction } from '../../src/storage/transaction.js'
import { createTestStorage } from '../helper.js'
import { perSuite } from '../support/built.js'

const T0 = Date.parse('2026-03-01T00:00:00.000Z')
const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString()
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`

describe('notices in the change feed', () => {
  const storage = perSuite(() => createTestStorage({ catalog: false }))
  let ours: string
  let theirs: string

  beforeAll(async () => {
    ours = (await createOrganisation(storage.db, 'Ours', T0)).id
    theirs = (await createOrganisation(storage.db, 'Theirs', T0)).id
  })

  async function feedOf(organisationId: string, limit: number, window?: number): Promise<StudentChange[]> {
    const all: StudentChange[] = []
    let after = 0
    for (;;) {
      const page = (await pageStudentChanges(storage.db, { organisationId, sandbox: false }, after, limit, window))!
      expect(page.changes.length).toBeLessThanOrEqual(limit)
      expect(page.next).toBeGreaterThanOrEqual(after)
      all.push(...page.changes)
      after = page.next
      if (!page.hasMore) return all
    }
  }

  it('numbers notices with the changes and shows each only to its organisation, merged in order', async () => {
    // Student 1 stays linked to both; notices about it go to each organisation alternately, as if
    // it had left and come back. Students 2..6 change their tier between the notices.
    await upsertStudents(storage.db, [{ id: uuid(1), firstName: 'Stays', tier: 'explorer' }], Date.parse(at(0)))
    await linkStudents(
      storage.db,
      [
        { studentId: uuid(1), organisationId: ours },
        { studentId: uuid(1), organisationId: theirs },
      ],
      T0,
    )
    for (let n = 2; n <= 6; n++) {
      await upsertStudents(storage.db, [{ id: uuid(n), firstName: `S${n}`, tier: 'builder' }], Date.parse(at(n)))
      await linkStudents(storage.db, [{ studentId: uuid(n), organisationId: ours }], T0)
      const organisationId = n % 2 === 0 ? ours : theirs
      await inTransaction(storage.db, (trx) =>
        recordStudentChanges(trx, [
          {
            type: n % 3 === 0 ? 'student_deleted' : 'student_unlinked',
            studentId: uuid(1),
            organisationId,
            changedAt: at(n),
          },
        ]),
      )
    }
    const whole = await feedOf(ours, 500)
    expect(whole.map((item) => [item.sequence, item.type, item.studentId])).toEqual([
      [1, 'tier_changed', uuid(1)],
      [2, 'tier_changed', uuid(2)],
      [3, 'student_unlinked', uuid(1)],
      [4, 'tier_changed', uuid(3)],
      [6, 'tier_changed', uuid(4)],
      [7, 'student_unlinked', uuid(1)],
      [8, 'tier_changed', uuid(5)],
      [10, 'tier_changed', uuid(6)],
      [11, 'student_deleted', uuid(1)],
    ])
    // A notice carries the id and the time, nothing else.
    expect(whole[2]).toEqual({ sequence: 3, type: 'student_unlinked', studentId: uuid(1), changedAt: at(2) })
    const theirsFeed = await feedOf(theirs, 500)
    expect(theirsFeed.map((item) => [item.sequence, item.type])).toEqual([
      [1, 'tier_changed'],
      [5, 'student_deleted'],
      [9, 'student_unlinked'],
    ])
    for (const [limit, window] of [
      [1, 1],
      [2, 3],
      [1, 1000],
      [4, 2],
      [3, 5],
    ] as const) {
      expect(await feedOf(ours, limit, window), `ours: limit ${limit}, window ${window}`).toEqual(whole)
      expect(await feedOf(theirs, limit, window), `theirs: limit ${limit}, window ${window}`).toEqual(theirsFeed)
    }
  })
})
