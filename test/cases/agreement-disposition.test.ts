/**
 * The end of an agreement, on the clock: nothing happens within the disposition period; once it
 * has run out, the organisation's shares and links end in one transaction, each linked student
 * with one `student_unlinked` notice and webhook, recorded with the students' ids; running it
 * again, or on two instances at once, does it once; a new agreement starts clean. Attestations
 * are recorded once per agreement, also when two race, and two instances needing the certificate
 * signing key for the first time at once end up with the same one.
 */
import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isoAt } from '../../src/clock.js'
import { loadSigningKey, SIGNING_KEY_SETTING } from '../../src/services/signing-keys.js'
import { endAgreements } from '../../src/cases/agreement-end.js'
import { recordAgreement } from '../../src/cases/agreement-record.js'
import { disposeDueAgreements, disposeOnDemand, dispositionPlan } from '../../src/cases/agreement-disposition.js'
import { type AgreementEnd, agreementEnds } from '../../src/storage/agreement-end-repository.js'
import { pruneChangeLog } from '../../src/storage/change-feed-retention-repository.js'
import { openStorage, type Storage } from '../../src/storage/connection.js'
import { attestDeletion } from '../../src/cases/deletion-attestation.js'
import { type DeletionEntry, deletionList } from '../../src/storage/deletion-list-repository.js'
import { recordDisclosure } from '../../src/storage/disclosure-log.js'
import { pageStudentChanges } from '../../src/storage/student-change-log.js'
import { linkStudents, upsertStudents } from '../../src/storage/student-import-repository.js'
import { eraseStudents } from '../../src/cases/erasure.js'
import { unlinkStudent } from '../../src/cases/unlink.js'
import { claimDue, recordAttempt } from '../../src/storage/webhook-outbox-repository.js'
import { createEndpoint } from '../../src/storage/webhook-endpoint-repository.js'
import {
  createTestStorage,
  type Fixtures,
  freshDatabaseUrl,
  migrateBesideOtherTests,
  openTestStorage,
  seedFixtures,
  START,
  STUDENTS,
} from '../helper.js'
import { perSuite } from '../support/built.js'
import { studentIdsOf } from '../support/linked-students.js'

const DAY = 86_400_000

/** The whole deletion list of `end`, read `pageSize` at a time. */
async function listOf(storage: Storage, end: AgreementEnd, pageSize?: number): Promise<DeletionEntry[]> {
  const entries: DeletionEntry[] = []
  for await (const page of deletionList(storage.db, end, pageSize)) entries.push(...page)
  return entries
}
const idsOf = (entries: readonly DeletionEntry[]) => entries.map((entry) => entry.studentId)

describe('the end of an agreement', () => {
  const storage = perSuite(() => createTestStorage({ url: freshDatabaseUrl() }))
  let fixtures: Fixtures
  let acme: string
  let shareId: string
  const ended = START + DAY

  beforeAll(async () => {
    fixtures = await seedFixtures(storage, START)
    acme = fixtures.orgs.acme
    await createEndpoint(
      storage.db,
      { organisationId: acme, mode: 'live', url: 'https://hooks.example.org/in', events: ['student.unlinked'] },
      START,
    )
    // A second list share of Acme holding Ada, beside the fixtures' import share holding all three.
    shareId = randomUUID()
    await storage.db
      .insertInto('shares')
      .values({
        id: shareId,
        organisation_id: acme,
        kind: 'list',
        school_id: null,
        label: 'a list',
        created_at: isoAt(START),
        created_by: 'test',
        ended_at: null,
      })
      .execute()
    await storage.db
      .insertInto('share_students')
      .values({ share_id: shareId, student_id: STUDENTS.ada, organisation_id: acme })
      .execute()
    await endAgreements(storage.db, { organisationId: acme }, ended)
  })

  const linksOf = (organisationId: string) => studentIdsOf(storage.db, organisationId)
  const noticesOf = async (organisationId: string) =>
    (await pageStudentChanges(storage.db, { organisationId, sandbox: false }, 0, 500))!.changes.filter(
      (change) => change.type === 'student_unlinked',
    )
  const unlinkedDeliveries = () =>
    storage.db
      .selectFrom('webhook_deliveries')
      .select('student_id')
      .where('event_type', '=', 'student.unlinked')
      .execute()

  it('changes nothing within the disposition period, and shows what is to be deleted by when', async () => {
    expect(await disposeDueAgreements(storage.db, ended + 30 * DAY - 1)).toEqual([])
    expect(await linksOf(acme)).toEqual([STUDENTS.ada, STUDENTS.ben, STUDENTS.dev].sort())
    expect(await noticesOf(acme)).toEqual([])
    const [end] = await agreementEnds(storage.db, ended + 29 * DAY, acme)
    expect(end).toMatchObject({
      endedAt: isoAt(ended),
      deletionDueAt: isoAt(ended + 30 * DAY),
      disposition: null,
      students: 3,
      attestation: null,
    })
    expect(idsOf(await listOf(storage, end!))).toEqual([STUDENTS.ada, STUDENTS.ben, STUDENTS.dev].sort())
    // Beta's agreement is in force: nothing to delete there.
    expect(await agreementEnds(storage.db, ended + 29 * DAY, fixtures.orgs.beta)).toEqual([])
  })

  it('ends the shares and links once it has run out, each student with a notice and a webhook, once', async () => {
    const due = ended + 30 * DAY
    const [outcome, ...more] = await disposeDueAgreements(storage.db, due)
    expect(more).toEqual([])
    expect(outcome).toMatchObject({ organisationId: acme, students: 3, sharesEnded: 2, webhooks: 3 })
    expect(await linksOf(acme)).toEqual([])
    // Ben stays linked to Beta, whose agreement is in force.
    expect(await linksOf(fixtures.orgs.beta)).toEqual([STUDENTS.ben, STUDENTS.cleo].sort())
    const share = await storage.db.selectFrom('shares').selectAll().where('id', '=', shareId).executeTakeFirstOrThrow()
    expect(share.ended_at).toBe(isoAt(due))
    expect(
      await storage.db.selectFrom('share_students').selectAll().where('organisation_id', '=', acme).execute(),
    ).toEqual([])
    const notices = await noticesOf(acme)
    expect(notices.map((n) => [n.studentId, n.changedAt]).sort()).toEqual(
      [STUDENTS.ada, STUDENTS.ben, STUDENTS.dev].sort().map((id) => [id, isoAt(due)]),
    )
    expect((await unlinkedDeliveries()).map((d) => d.student_id).sort()).toEqual(
      [STUDENTS.ada, STUDENTS.ben, STUDENTS.dev].sort(),
    )
    expect(await noticesOf(fixtures.orgs.beta)).toEqual([])

    const [end] = await agreementEnds(storage.db, due, acme)
    expect(end).toMatchObject({ disposition: { unlinkedAt: isoAt(due), sharesEnded: 2 }, students: 3 })
    expect(idsOf(await listOf(storage, end!))).toEqual([STUDENTS.ada, STUDENTS.ben, STUDENTS.dev].sort())

    // Again, later: done already, nobody is told twice.
    expect(await disposeDueAgreements(storage.db, due + DAY)).toEqual([])
    expect(await noticesOf(acme)).toHaveLength(3)
    expect(await unlinkedDeliveries()).toHaveLength(3)
  })

  it('lets a new agreement start clean, and disposes of its own end only', async () => {
    const renewed = ended + 40 * DAY
    const agreement = await recordAgreement(
      storage.db,
      {
        organisationId: acme,
        signedAt: renewed,
        expiresAt: renewed + 10 * DAY,
        documentRef: 'DSA-renewed',
        dispositionDays: 5,
      },
      renewed,
    )
    await linkStudents(storage.db, [{ studentId: STUDENTS.ada, organisationId: acme }], renewed)
    expect(await disposeDueAgreements(storage.db, renewed + DAY)).toEqual([])
    expect(await linksOf(acme)).toEqual([STUDENTS.ada])
    // The first end still awaits its attestation; the new agreement is in force.
    expect((await agreementEnds(storage.db, renewed + DAY, acme)).map((e) => e.agreement.document_ref)).toEqual([
      `DSA-Acme Learning`,
    ])
    expect(await disposeDueAgreements(storage.db, renewed + 15 * DAY - 1)).toEqual([])
    const [outcome] = await disposeDueAgreements(storage.db, renewed + 15 * DAY)
    expect(outcome).toMatchObject({ agreementId: agreement.id, students: 1, sharesEnded: 1 })
    expect(await linksOf(acme)).toEqual([])
    const ends = await agreementEnds(storage.db, renewed + 15 * DAY, acme)
    expect(ends.map((e) => [e.agreement.document_ref, e.students])).toEqual([
      ['DSA-renewed', 1],
      ['DSA-Acme Learning', 3],
    ])
  })

  it('records an attestation once per agreement, by key or account, and asks which when several await', async () => {
    const now = START + 200 * DAY
    const by = { keyId: fixtures.keyIds.read }
    const ambiguous = await attestDeletion(storage.db, { organisationId: acme, by }, now)
    expect(ambiguous.outcome).toBe('ambiguous')
    const [latest, first] = await agreementEnds(storage.db, now, acme)
    const attested = await attestDeletion(
      storage.db,
      { organisationId: acme, agreementId: first!.agreement.id, by },
      now,
    )
    expect(attested).toMatchObject({
      outcome: 'attested',
      end: { attestation: { attestedAt: isoAt(now), keyId: fixtures.keyIds.read, keyName: 'read', accountId: null } },
    })
    const again = await attestDeletion(
      storage.db,
      { organisationId: acme, agreementId: first!.agreement.id, by },
      now + 1,
    )
    expect(again).toMatchObject({ outcome: 'already', end: { attestation: { attestedAt: isoAt(now) } } })
    // The one left awaiting is attested without naming it.
    const rest = await attestDeletion(storage.db, { organisationId: acme, by }, now + 2)
    expect(rest).toMatchObject({ outcome: 'attested', end: { agreement: { id: latest!.agreement.id } } })
    expect(await attestDeletion(storage.db, { organisationId: acme, by }, now + 3)).toMatchObject({
      outcome: 'already',
    })
    // Beta has an agreement in force, Gamma none ever: nothing to attest; nor an agreement of another organisation.
    for (const organisationId of [fixtures.orgs.beta, fixtures.orgs.gamma])
      expect(await attestDeletion(storage.db, { organisationId, by }, now)).toMatchObject({ outcome: 'nothing' })
    const foreign = { organisationId: fixtures.orgs.beta, agreementId: first!.agreement.id, by }
    expect(await attestDeletion(storage.db, foreign, now)).toMatchObject({ outcome: 'nothing' })
  })
})

describe('the end of an agreement on two instances at once', () => {
  let first: Storage
  let second: Storage
  const STUDENT_COUNT = 40
  let organisationId: string
  let keyId: string

  beforeAll(async () => {
    const url = freshDatabaseUrl()
    first = await createTestStorage({ url, catalog: false })
    second = openStorage(url, { busyTimeoutMs: 5000 })
    const fixtures = await seedFixtures(first, START)
    organisationId = fixtures.orgs.beta
    keyId = fixtures.keyIds.otherOrg
    const students = Array.from({ length: STUDENT_COUNT }, (_, i) => ({
      id: randomUUID(),
      firstName: `Twin${i}`,
      tier: 'explorer' as const,
    }))
    await upsertStudents(first.db, students, START)
    await linkStudents(
      first.db,
      students.map((s) => ({ studentId: s.id, organisationId })),
      START,
    )
    await createEndpoint(
      first.db,
      { organisationId, mode: 'live', url: 'https://hooks.example.org/in', events: ['student.unlinked'] },
      START,
    )
    await endAgreements(first.db, { organisationId }, START)
  })
  afterAll(async () => {
    await second?.close()
    await first?.close()
  })

  it('carries out one disposition and tells each student once', async () => {
    const due = START + 31 * DAY
    const runs = await Promise.all([disposeDueAgreements(first.db, due), disposeDueAgreements(second.db, due)])
    expect(runs.flat()).toHaveLength(1)
    expect(runs.flat()[0]).toMatchObject({ organisationId, students: STUDENT_COUNT + 2 })
    const dispositions = await first.db.selectFrom('agreement_dispositions').selectAll().execute()
    expect(dispositions).toHaveLength(1)
    const notices = (await pageStudentChanges(first.db, { organisationId, sandbox: false }, 0, 500))!.changes.filter(
      (change) => change.type === 'student_unlinked',
    )
    expect(notices).toHaveLength(STUDENT_COUNT + 2)
    expect(new Set(notices.map((n) => n.studentId)).size).toBe(STUDENT_COUNT + 2)
    const deliveries = await first.db.selectFrom('webhook_deliveries').select('student_id').execute()
    expect(deliveries).toHaveLength(STUDENT_COUNT + 2)
  })

  it('generates one signing key when two instances first need it at once', async () => {
    const keys = await Promise.all([loadSigningKey(first.db), loadSigningKey(second.db)])
    expect(keys[0].publicJwk).toEqual(keys[1].publicJwk)
    const stored = await first.db.selectFrom('settings').selectAll().where('name', '=', SIGNING_KEY_SETTING).execute()
    expect(stored).toHaveLength(1)
    expect((await loadSigningKey(second.db)).publicJwk.kid).toBe(keys[0].publicJwk.kid)
  })

  it('records one of two attestations sent at once, and tells the other it was attested', async () => {
    const now = START + 40 * DAY
    const results = await Promise.all(
      [first, second].map((storage) => attestDeletion(storage.db, { organisationId, by: { keyId } }, now)),
    )
    expect(results.map((r) => r.outcome).sort()).toEqual(['already', 'attested'])
    expect(await first.db.selectFrom('deletion_attestations').selectAll().execute()).toHaveLength(1)
  })
})

describe('the deletion list of an end', () => {
  const storage = perSuite(() => createTestStorage({ url: freshDatabaseUrl(), catalog: false }))
  let fixtures: Fixtures
  let acme: string
  const EVE = '55555555-5555-4555-8555-555555555555'
  const FAY = '66666666-6666-4666-8666-666666666666'
  const GUS = '77777777-7777-4777-8777-777777777777'
  const ended = START + 10 * DAY
  const due = ended + 30 * DAY

  beforeAll(async () => {
    fixtures = await seedFixtures(storage, START)
    acme = fixtures.orgs.acme
    // Subscribed to unlinking only: an erasure's notice reaches Acme through its change feed alone.
    await createEndpoint(
      storage.db,
      { organisationId: acme, mode: 'live', url: 'https://hooks.example.org/in', events: ['student.unlinked'] },
      START,
    )
    await upsertStudents(
      storage.db,
      [EVE, FAY, GUS].map((id) => ({ id, firstName: 'Kid', tier: 'explorer' as const })),
      START,
    )
    await linkStudents(
      storage.db,
      [EVE, FAY, GUS].map((studentId) => ({ studentId, organisationId: acme })),
      START,
    )
    // Acme read Eve's and Fay's progress under its agreement, then Eve was unlinked and Fay erased.
    for (const [i, student] of [EVE, FAY].entries())
      await recordDisclosure(
        storage.db,
        { at: START + DAY, requestId: `read-${i}`, keyId: fixtures.keyIds.read, organisationId: acme },
        student,
        'progress.read',
        'disclosed',
      )
    await unlinkStudent(storage.db, EVE, acme, START + 2 * DAY)
    const { due: claimed } = await storage.writes.transaction((trx) =>
      claimDue(trx, { now: START + 2 * DAY, leaseMs: 60_000, slots: 16, perEndpoint: 2, locks: storage.locks }),
    )
    expect(claimed.map((d) => d.student_id)).toEqual([EVE])
    await storage.writes.transaction((trx) =>
      recordAttempt(
        trx,
        claimed[0]!,
        { ok: true, status: 204, latencyMs: 5, error: null, response: '', bodySent: true },
        START + 2 * DAY,
        10_000,
      ),
    )
    await eraseStudents(storage.db, [FAY], START + 3 * DAY)
    // Gus was unlinked and linked again: linked at the end, the disposition asks for him.
    await unlinkStudent(storage.db, GUS, acme, START + 4 * DAY)
    await linkStudents(storage.db, [{ studentId: GUS, organisationId: acme }], START + 5 * DAY)
    await endAgreements(storage.db, { organisationId: acme }, ended)
    // The change feed forgets the notices (its retention); the list does not.
    const pruned = await pruneChangeLog(storage.db, {
      before: isoAt(START + 20 * DAY),
      write: (work) => storage.writes.transaction(work),
    })
    expect(pruned).toBeGreaterThan(0)
    expect(
      await storage.db.selectFrom('student_changes').select('seq').where('student_id', '=', EVE).execute(),
    ).toEqual([])
  })

  const linkedNow = [STUDENTS.ada, STUDENTS.ben, STUDENTS.dev, GUS].sort()

  it('covers, within the period, those linked now and those unlinked or erased earlier under the agreement', async () => {
    const [end] = await agreementEnds(storage.db, ended + DAY, acme)
    expect(end).toMatchObject({
      students: 6,
      coverage: {
        since: isoAt(START - 30 * DAY),
        until: isoAt(ended + DAY + 1),
        linked: 4,
        unlinked: 1,
        erased: 1,
      },
    })
    const entries = await listOf(storage, end!)
    expect(entries).toEqual(
      [
        ...linkedNow.map((studentId) => ({ studentId, askedBy: 'disposition', askedAt: null, webhook: null })),
        { studentId: EVE, askedBy: 'student.unlinked', askedAt: isoAt(START + 2 * DAY), webhook: 'delivered' },
        { studentId: FAY, askedBy: 'student.deleted', askedAt: isoAt(START + 3 * DAY), webhook: 'no_endpoint' },
      ].sort((a, b) => (a.studentId < b.studentId ? -1 : 1)),
    )
    for (const pageSize of [1, 2, 5]) expect(await listOf(storage, end!, pageSize)).toEqual(entries)
  })

  it('records the attestation with the size of the list it covers', async () => {
    const attested = await attestDeletion(
      storage.db,
      { organisationId: acme, by: { keyId: fixtures.keyIds.read } },
      ended + 2 * DAY,
    )
    expect(attested).toMatchObject({ outcome: 'attested', end: { students: 6, attestation: { students: 6 } } })
  })

  it('keeps them all once the links have ended, the disposition asking for those linked then', async () => {
    const [outcome] = await disposeDueAgreements(storage.db, due)
    expect(outcome).toMatchObject({ organisationId: acme, students: 4 })
    const [end] = await agreementEnds(storage.db, due + DAY, acme)
    expect(end).toMatchObject({
      students: 6,
      coverage: { until: isoAt(due), linked: 4, unlinked: 1, erased: 1 },
      attestation: { students: 6 },
    })
    const entries = await listOf(storage, end!, 2)
    expect(entries.filter((e) => e.askedBy === 'disposition')).toEqual(
      linkedNow.map((studentId) => ({ studentId, askedBy: 'disposition', askedAt: isoAt(due), webhook: 'pending' })),
    )
    expect(entries.filter((e) => e.askedBy !== 'disposition').map((e) => [e.studentId, e.askedBy])).toEqual([
      [EVE, 'student.unlinked'],
      [FAY, 'student.deleted'],
    ])
    // Beta's students, and those Acme never had, are on no list of Acme's.
    expect(idsOf(entries)).not.toContain(STUDENTS.cleo)
  })

  it("starts a new agreement's list clean: only what is shared under it", async () => {
    const renewed = due + 5 * DAY
    await recordAgreement(
      storage.db,
      {
        organisationId: acme,
        signedAt: renewed,
        expiresAt: renewed + 10 * DAY,
        documentRef: 'DSA-2',
        dispositionDays: 1,
      },
      renewed,
    )
    await linkStudents(storage.db, [{ studentId: STUDENTS.ada, organisationId: acme }], renewed)
    await unlinkStudent(storage.db, STUDENTS.ada, acme, renewed + DAY)
    const [latest, first] = await agreementEnds(storage.db, renewed + 11 * DAY, acme)
    expect(latest).toMatchObject({
      agreement: { document_ref: 'DSA-2' },
      students: 1,
      coverage: { since: isoAt(renewed), linked: 0, unlinked: 1, erased: 0 },
    })
    expect(await listOf(storage, latest!)).toEqual([
      { studentId: STUDENTS.ada, askedBy: 'student.unlinked', askedAt: isoAt(renewed + DAY), webhook: 'pending' },
    ])
    expect(first).toMatchObject({ students: 6 })
  })
})

describe('migration 0016 over notices sent before it', () => {
  const storage = perSuite(async () => openTestStorage())

  it('records as departures the notices the change feed and the webhook outbox still hold, once each', async () => {
    await migrateBesideOtherTests(storage, '0015-erased-student-schools')
    const db = storage.db as unknown as Kysely<Record<string, Record<string, unknown>>>
    const at = (days: number) => isoAt(START + days * DAY)
    const org = randomUUID()
    await db
      .insertInto('organisations')
      .values({ id: org, name: 'Acme', status: 'active', created_at: at(0) })
      .execute()
    const notice = (seq: number, student: string, kind: string, days: number) => ({
      seq,
      student_id: student,
      kind,
      changed_at: at(days),
      organisation_id: org,
    })
    await db
      .insertInto('student_changes')
      .values([
        notice(1, STUDENTS.ada, 'student_unlinked', 1),
        notice(2, STUDENTS.ben, 'student_deleted', 2),
        {
          seq: 3,
          student_id: STUDENTS.dev,
          kind: 'tier_changed',
          changed_at: at(2),
          organisation_id: null,
          tier: 'builder',
        },
      ])
      .execute()
    const endpoint = randomUUID()
    await db
      .insertInto('webhook_endpoints')
      .values({
        id: endpoint,
        organisation_id: org,
        mode: 'live',
        url: 'https://hooks.example.org/in',
        events: 'student.unlinked student.deleted',
        secret: 'x',
        status: 'enabled',
        created_at: at(0),
      })
      .execute()
    const delivery = (student: string, event: string, days: number) => ({
      id: randomUUID(),
      endpoint_id: endpoint,
      event_type: event,
      payload: '{}',
      student_id: student,
      created_at: at(days),
      state: 'delivered',
      attempts: 1,
    })
    await db
      .insertInto('webhook_deliveries')
      .values([
        // The feed's copy of Ada's notice is there too; Cleo's is past the feed's retention.
        delivery(STUDENTS.ada, 'student.unlinked', 1),
        delivery(STUDENTS.cleo, 'student.unlinked', -100),
        delivery(STUDENTS.dev, 'progress.updated', 2),
      ])
      .execute()
    await migrateBesideOtherTests(storage, '0016-student-departures')
    const departures = await storage.db.selectFrom('student_departures').selectAll().orderBy('student_id').execute()
    expect(departures).toEqual([
      { organisation_id: org, student_id: STUDENTS.ada, at: at(1), event: 'student.unlinked' },
      { organisation_id: org, student_id: STUDENTS.ben, at: at(2), event: 'student.deleted' },
      { organisation_id: org, student_id: STUDENTS.cleo, at: at(-100), event: 'student.unlinked' },
    ])
  })
})

describe('the disposition on demand', () => {
  let first: Storage
  let second: Storage
  let fixtures: Fixtures
  const ended = START + DAY

  beforeAll(async () => {
    const url = freshDatabaseUrl()
    first = await createTestStorage({ url, catalog: false })
    second = openStorage(url, { busyTimeoutMs: 5000 })
    fixtures = await seedFixtures(first, START)
    await endAgreements(first.db, { organisationId: fixtures.orgs.acme }, ended)
  })
  afterAll(async () => {
    await second?.close()
    await first?.close()
  })

  it('says why there is nothing to dispose of, or what disposing would end', async () => {
    const now = ended + DAY
    expect(await dispositionPlan(first.db, fixtures.orgs.beta, now)).toMatchObject({
      kind: 'in_force',
      agreement: { document_ref: 'DSA-Beta Tutors' },
    })
    expect(await dispositionPlan(first.db, fixtures.orgs.gamma, now)).toEqual({ kind: 'no_agreement' })
    expect(await dispositionPlan(first.db, fixtures.orgs.acme, now)).toMatchObject({
      kind: 'to_dispose',
      due: false,
      links: 3,
      shares: 1,
      endpoints: 0,
      end: { deletionDueAt: isoAt(ended + 30 * DAY) },
    })
  })

  it('runs before the period only when asked to, once however many run it at once', async () => {
    const now = ended + DAY
    const agreementId = (await dispositionPlan(first.db, fixtures.orgs.acme, now)) as {
      end: { agreement: { id: string } }
    }
    const id = agreementId.end.agreement.id
    expect(await disposeOnDemand(first.db, fixtures.orgs.acme, id, now, false)).toBeUndefined()
    expect(await first.db.selectFrom('agreement_dispositions').selectAll().execute()).toEqual([])
    const runs = await Promise.all([
      disposeOnDemand(first.db, fixtures.orgs.acme, id, now, true),
      disposeOnDemand(second.db, fixtures.orgs.acme, id, now, true),
    ])
    expect(runs.filter((run) => run !== undefined)).toEqual([
      { organisationId: fixtures.orgs.acme, agreementId: id, students: 3, sharesEnded: 1, webhooks: 0 },
    ])
    const [row, ...more] = await first.db.selectFrom('agreement_dispositions').selectAll().execute()
    expect(more).toEqual([])
    expect(row).toMatchObject({ unlinked_at: isoAt(now), deletion_due_at: isoAt(ended + 30 * DAY), students: 3 })
    expect(await dispositionPlan(first.db, fixtures.orgs.acme, now + 1)).toMatchObject({
      kind: 'disposed',
      unlinkedAt: isoAt(now),
    })
    // The hourly run finds it done when the period is over.
    expect(await disposeDueAgreements(first.db, ended + 31 * DAY)).toEqual([])
    expect(await disposeOnDemand(first.db, fixtures.orgs.acme, id, now + 2, true)).toBeUndefined()
  })
})
