/**
 * Shares on both engines: a school share links the school's students present and future (one
 * who joins later is linked, one who leaves is unlinked and the organisation told); a student
 * held by two shares stays linked until the last ends; two racing shares of one school give one;
 * a share made while a student joins the school holds that student; sandboxes are refused; and
 * after every change a link to a partner exists exactly while a share in force holds it, also when
 * a share of more students than one statement takes ends.
 */
import { sql } from 'kysely'
import { beforeAll, describe, expect, it } from 'vitest'
import { createSandbox } from '../../src/cases/sandbox.js'
import { createOrganisation } from '../../src/storage/access-repository.js'
import { sandboxStudents } from '../../src/storage/sandbox-repository.js'
import type { Attendance } from '../../src/storage/school-share-repository.js'
import { changeAttendance } from '../../src/cases/school-attendance.js'
import { createSchool } from '../../src/cases/schools.js'
import { countLinked, listShares, sharedStudents } from '../../src/storage/share-listing-repository.js'
import {
  endShare,
  SandboxShareError,
  ShareInForceError,
  shareList,
  shareSchool,
  UnknownStudentsError,
} from '../../src/cases/shares.js'
import { pageStudentChanges } from '../../src/storage/student-change-log.js'
import { importShares, linkStudents, upsertStudents } from '../../src/storage/student-import-repository.js'
import { unlinkStudent } from '../../src/cases/unlink.js'
import { inTransaction } from '../../src/storage/transaction.js'
import { createEndpoint } from '../../src/storage/webhook-endpoint-repository.js'
import { createTestStorage } from '../helper.js'
import { expectSharesHoldEveryLink } from '../support/share-invariant.js'
import { perSuite } from '../support/built.js'
import { studentIdsOf } from '../support/linked-students.js'

const T0 = Date.parse('2026-03-02T09:00:00.000Z')
const MINUTE = 60_000
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`

describe('shares', () => {
  const storage = perSuite(() => createTestStorage({ catalog: false }))
  let acme: string
  let now = T0
  const later = () => (now += MINUTE)

  beforeAll(async () => {
    acme = (await createOrganisation(storage.db, 'Acme Learning', T0)).id
    await upsertStudents(
      storage.db,
      Array.from({ length: 40 }, (_, i) => ({ id: uuid(i + 1), firstName: `S${i + 1}`, tier: 'explorer' as const })),
      T0,
    )
    await createEndpoint(
      storage.db,
      { organisationId: acme, mode: 'live', url: 'https://hooks.example.org/in', events: ['student.unlinked'] },
      T0,
    )
  })

  const attend = (joined: Attendance[], left: Attendance[] = []) =>
    inTransaction(storage.db, (trx) => changeAttendance(trx, { joined, left }, later()))
  const linked = (organisationId: string) => studentIdsOf(storage.db, organisationId)
  const notices = async (organisationId: string) =>
    (await pageStudentChanges(storage.db, { organisationId, sandbox: false }, 0, 500))!.changes
      .filter((change) => change.type === 'student_unlinked')
      .map((change) => change.studentId)
  const unlinkedDeliveries = async (studentId: string) =>
    (
      await storage.db
        .selectFrom('webhook_deliveries')
        .select(['event_type', 'student_id'])
        .where('event_type', '=', 'student.unlinked')
        .where('student_id', '=', studentId)
        .execute()
    ).length

  it('links a school’s students present and future, and unlinks, with a notice and a webhook, one who leaves', async () => {
    const school = await createSchool(storage.db, { name: 'Hillside Primary', identifier: 'HP-01' }, later())
    await attend([uuid(1), uuid(2)].map((studentId) => ({ studentId, schoolId: school.id })))
    expect(await linked(acme)).toEqual([])

    const made = await shareSchool(
      storage.db,
      { organisationId: acme, schoolId: school.id, createdBy: 'cli:t' },
      later(),
    )
    expect(made).toMatchObject({ students: 2, linked: 2, share: { kind: 'school', label: 'Hillside Primary' } })
    expect(await linked(acme)).toEqual([uuid(1), uuid(2)])
    await expectSharesHoldEveryLink(storage.db)

    // Future: a student who joins the school later is linked.
    const joined = await attend([{ studentId: uuid(3), schoolId: school.id }])
    expect(joined.linked).toEqual([{ studentId: uuid(3), organisationId: acme }])
    expect(await linked(acme)).toEqual([uuid(1), uuid(2), uuid(3)])
    await expectSharesHoldEveryLink(storage.db)

    // One who leaves is unlinked, and the organisation told in its feed and by webhook.
    const left = await attend([], [{ studentId: uuid(2), schoolId: school.id }])
    expect(left).toMatchObject({ unlinked: [{ studentId: uuid(2), organisationId: acme }], webhooks: 1 })
    expect(await linked(acme)).toEqual([uuid(1), uuid(3)])
    expect(await notices(acme)).toEqual([uuid(2)])
    expect(await unlinkedDeliveries(uuid(2))).toBe(1)
    await expectSharesHoldEveryLink(storage.db)

    // Ending the share unlinks the rest; the school no longer follows.
    const ended = await endShare(storage.db, made.share.id, later())
    expect(ended).toMatchObject({ ended: true, released: 2, webhooks: 2 })
    expect(await linked(acme)).toEqual([])
    const told = await notices(acme)
    expect([told[0], ...told.slice(1).sort()]).toEqual([uuid(2), uuid(1), uuid(3)])
    await attend([{ studentId: uuid(4), schoolId: school.id }])
    expect(await linked(acme)).toEqual([])
    // Ending it again changes nothing and tells nobody.
    expect(await endShare(storage.db, made.share.id, later())).toMatchObject({ ended: false, unlinked: [] })
    expect((await notices(acme)).length).toBe(3)
    await expectSharesHoldEveryLink(storage.db)
  })

  it('keeps a student held by a school share and a list share linked until the last one ends', async () => {
    const beta = (await createOrganisation(storage.db, 'Beta Tutors', later())).id
    const school = await createSchool(storage.db, { name: 'Riverside Academy' }, later())
    await attend([uuid(10), uuid(11)].map((studentId) => ({ studentId, schoolId: school.id })))
    const bySchool = await shareSchool(
      storage.db,
      { organisationId: beta, schoolId: school.id, createdBy: null },
      later(),
    )
    const byList = await shareList(
      storage.db,
      { organisationId: beta, studentIds: [uuid(11), uuid(12)], label: 'Reading club', createdBy: null },
      later(),
    )
    expect(byList).toMatchObject({ students: 2, linked: 1, share: { kind: 'list', label: 'Reading club' } })
    expect(await linked(beta)).toEqual([uuid(10), uuid(11), uuid(12)])

    const page = await sharedStudents(storage.db, beta, { limit: 2 })
    expect(page.students.map((s) => [s.id, s.reasons.map((r) => r.label)])).toEqual([
      [uuid(10), ['Riverside Academy']],
      [uuid(11), ['Riverside Academy', 'Reading club']],
    ])
    expect(page.next).toBe(uuid(11))
    const rest = await sharedStudents(storage.db, beta, { after: page.next!, limit: 2 })
    expect(rest).toMatchObject({ students: [{ id: uuid(12), reasons: [{ kind: 'list' }] }], next: null })
    expect((await listShares(storage.db, beta)).map((s) => [s.label, s.students, s.endedAt])).toEqual([
      ['Reading club', 2, null],
      ['Riverside Academy', 2, null],
    ])
    expect(await countLinked(storage.db, beta)).toBe(3)

    // The school share ends: uuid(11) stays, held by the list.
    const first = await endShare(storage.db, bySchool.share.id, later())
    expect(first.unlinked).toEqual([{ studentId: uuid(10), organisationId: beta }])
    expect(await linked(beta)).toEqual([uuid(11), uuid(12)])
    await expectSharesHoldEveryLink(storage.db)
    // The list ends: the last share holding them.
    const last = await endShare(storage.db, byList.share.id, later())
    expect(last.unlinked.map((link) => link.studentId).sort()).toEqual([uuid(11), uuid(12)])
    expect(await linked(beta)).toEqual([])
    expect((await notices(beta)).sort()).toEqual([uuid(10), uuid(11), uuid(12)])
    const listed = await listShares(storage.db, beta)
    expect(listed.map((s) => [s.label, s.students, s.endedAt !== null])).toEqual([
      ['Reading club', 0, true],
      ['Riverside Academy', 0, true],
    ])
    await expectSharesHoldEveryLink(storage.db)
  })

  it('takes an unlinked student out of every share; a school share links them again only when they join anew', async () => {
    const gamma = (await createOrganisation(storage.db, 'Gamma Apps', later())).id
    const school = await createSchool(storage.db, { name: 'Lakeside School' }, later())
    await attend([{ studentId: uuid(20), schoolId: school.id }])
    await shareSchool(storage.db, { organisationId: gamma, schoolId: school.id, createdBy: null }, later())
    await shareList(
      storage.db,
      { organisationId: gamma, studentIds: [uuid(20)], label: 'Club', createdBy: null },
      later(),
    )
    expect(await unlinkStudent(storage.db, uuid(20), gamma, later())).toMatchObject({ unlinked: true })
    expect(await linked(gamma)).toEqual([])
    await expectSharesHoldEveryLink(storage.db)
    // Still at the school: nothing changes until they leave and join again.
    await attend([{ studentId: uuid(20), schoolId: school.id }])
    expect(await linked(gamma)).toEqual([])
    await attend([], [{ studentId: uuid(20), schoolId: school.id }])
    await attend([{ studentId: uuid(20), schoolId: school.id }])
    expect(await linked(gamma)).toEqual([uuid(20)])
    await expectSharesHoldEveryLink(storage.db)
  })

  it('gives one share of two racing requests for the same school and organisation', async () => {
    const delta = (await createOrganisation(storage.db, 'Delta Maths', later())).id
    const school = await createSchool(storage.db, { name: 'Oakwood High' }, later())
    await attend([uuid(25), uuid(26)].map((studentId) => ({ studentId, schoolId: school.id })))
    const at = later()
    const outcomes = await Promise.allSettled(
      [1, 2].map(() => shareSchool(storage.db, { organisationId: delta, schoolId: school.id, createdBy: null }, at)),
    )
    expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected'])
    const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult
    expect(refused.reason).toBeInstanceOf(ShareInForceError)
    const shares = await listShares(storage.db, delta)
    expect(shares.map((s) => [s.kind, s.students])).toEqual([['school', 2]])
    await expectSharesHoldEveryLink(storage.db)
  })

  it('holds a student who joins the school while the share is being made', async () => {
    const epsilon = (await createOrganisation(storage.db, 'Epsilon Reading', later())).id
    const school = await createSchool(storage.db, { name: 'Meadow Primary' }, later())
    let release!: () => void
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    let inside!: () => void
    const joinedInside = new Promise<void>((resolve) => {
      inside = resolve
    })
    // The join's transaction stays open while the share is asked for.
    const joining = storage.db.transaction().execute(async (trx) => {
      await changeAttendance(trx, { joined: [{ studentId: uuid(30), schoolId: school.id }], left: [] }, later())
      inside()
      await held
    })
    await joinedInside
    const sharing = shareSchool(storage.db, { organisationId: epsilon, schoolId: school.id, createdBy: null }, later())
    expect(await whileJoinIsOpen(sharing)).toBe('waiting')
    release()
    await joining
    expect((await sharing).students).toBe(1)
    expect(await linked(epsilon)).toEqual([uuid(30)])
    await expectSharesHoldEveryLink(storage.db)
  })

  /**
   * Whether `sharing` waits for the open transaction: on PostgreSQL until a session waits for a
   * lock on a school's row; on SQLite a writing transaction runs alone, so it waits by construction.
   */
  async function whileJoinIsOpen(sharing: Promise<unknown>): Promise<'waiting' | 'finished'> {
    if (storage.engine === 'sqlite') return 'waiting'
    const settled = sharing.then(
      () => 'finished' as const,
      () => 'finished' as const,
    )
    for (let attempt = 0; attempt < 500; attempt++) {
      const tick = new Promise<'pending'>((resolve) => setTimeout(() => resolve('pending'), 10))
      if ((await Promise.race([settled, tick])) === 'finished') return 'finished'
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
        where wait_event_type = 'Lock' and query like 'update "schools"%'`.execute(storage.db)
      if (rows[0]!.n > 0) return 'waiting'
    }
    throw new Error('the share neither finished nor waited')
  }

  it('refuses sandboxes, sandbox students, unknown students, an empty list and a second share of a school', async () => {
    const sandbox = await createSandbox(storage.db, 'shares@example.org', later())
    const [synthetic] = await sandboxStudents(storage.db, sandbox.id)
    const school = await createSchool(storage.db, { name: 'Sandbox Test School' }, later())
    await expect(
      shareSchool(storage.db, { organisationId: sandbox.id, schoolId: school.id, createdBy: null }, later()),
    ).rejects.toThrow(/sandbox organisation/)
    await expect(
      shareList(
        storage.db,
        { organisationId: sandbox.id, studentIds: [uuid(1)], label: 'x', createdBy: null },
        later(),
      ),
    ).rejects.toThrow(/sandbox organisation/)
    const zeta = (await createOrganisation(storage.db, 'Zeta Science', later())).id
    await expect(
      shareList(
        storage.db,
        { organisationId: zeta, studentIds: [synthetic!.id], label: 'x', createdBy: null },
        later(),
      ),
    ).rejects.toBeInstanceOf(SandboxShareError)
    await expect(
      shareList(
        storage.db,
        { organisationId: zeta, studentIds: [uuid(1), uuid(999)], label: 'x', createdBy: null },
        later(),
      ),
    ).rejects.toBeInstanceOf(UnknownStudentsError)
    await expect(
      shareList(storage.db, { organisationId: zeta, studentIds: [], label: 'x', createdBy: null }, later()),
    ).rejects.toThrow(/at least one student/)
    await expect(
      shareList(storage.db, { organisationId: zeta, studentIds: [uuid(1)], label: ' ', createdBy: null }, later()),
    ).rejects.toThrow(/label is required/)
    await shareSchool(storage.db, { organisationId: zeta, schoolId: school.id, createdBy: null }, later())
    await expect(
      shareSchool(storage.db, { organisationId: zeta, schoolId: school.id, createdBy: null }, later()),
    ).rejects.toBeInstanceOf(ShareInForceError)
    // Nothing of the refused lists was written; the sandbox's own links belong to no share.
    expect(await linked(zeta)).toEqual([])
    expect(await listShares(storage.db, sandbox.id)).toEqual([])
    expect((await linked(sandbox.id)).length).toBe(8)
    await expectSharesHoldEveryLink(storage.db)
  })

  it('puts the links an import makes in one list share per organisation, across its batches', async () => {
    const eta = (await createOrganisation(storage.db, 'Eta Learning', later())).id
    const theta = (await createOrganisation(storage.db, 'Theta Tutors', later())).id
    const shares = importShares('links.csv', 'cli:tester')
    await linkStudents(storage.db, [{ studentId: uuid(35), organisationId: eta }], later(), undefined, shares)
    await linkStudents(
      storage.db,
      [
        { studentId: uuid(36), organisationId: eta },
        { studentId: uuid(36), organisationId: theta },
      ],
      later(),
      undefined,
      shares,
    )
    for (const [organisation, students] of [
      [eta, 2],
      [theta, 1],
    ] as const) {
      const [share, ...more] = await listShares(storage.db, organisation)
      expect(more).toEqual([])
      expect(share).toMatchObject({ kind: 'list', label: 'links.csv', createdBy: 'cli:tester', students })
    }
    // Without shares given, a call makes its own.
    await linkStudents(storage.db, [{ studentId: uuid(37), organisationId: eta }], later())
    expect((await listShares(storage.db, eta)).map((s) => s.label)).toEqual(['Linked by import', 'links.csv'])
    await expectSharesHoldEveryLink(storage.db)
  })

  it('ends a share of more students than one statement takes, unlinking exactly those no other share holds', async () => {
    const iota = (await createOrganisation(storage.db, 'Iota Learning', later())).id
    const school = await createSchool(storage.db, { name: 'Large North' }, later())
    // More than two of endUnsharedLinks' 500-student statements, and not a multiple of them.
    const ids = Array.from({ length: 1201 }, (_, i) => uuid(10_000 + i))
    await upsertStudents(
      storage.db,
      ids.map((id) => ({ id, firstName: 'Sam', tier: 'explorer' as const })),
      later(),
    )
    await attend(ids.map((studentId) => ({ studentId, schoolId: school.id })))
    const { share } = await shareSchool(
      storage.db,
      { organisationId: iota, schoolId: school.id, createdBy: null },
      later(),
    )
    // Every third student is also on a list: those stay linked when the school's share ends.
    const listed = ids.filter((_, i) => i % 3 === 0)
    await shareList(
      storage.db,
      { organisationId: iota, studentIds: listed, label: 'Reading group', createdBy: null },
      later(),
    )
    const ended = await endShare(storage.db, share.id, later())
    const unlisted = ids.filter((_, i) => i % 3 !== 0)
    expect(ended).toMatchObject({ ended: true, released: ids.length, webhooks: 0 })
    expect(ended.unlinked.map((link) => link.studentId).sort()).toEqual(unlisted)
    expect(await linked(iota)).toEqual(listed)
    // One notice each (more than the helper's first page of changes holds).
    const told = await storage.db
      .selectFrom('student_changes')
      .select('student_id')
      .where('organisation_id', '=', iota)
      .where('kind', '=', 'student_unlinked')
      .orderBy('student_id')
      .execute()
    expect(told.map((row) => row.student_id)).toEqual(unlisted)
    await expectSharesHoldEveryLink(storage.db)
  })
})
