/**
 * The end of an agreement, on the clock: nothing happens within the disposition period; once it
 * has run out, the organisation's shares and links end in one transaction, each linked student
 * with one `student_unlinked` notice and webhook, recorded with the students' ids; running it
 * again, or on two instances at once, does it once; a new agreement starts clean. Attestations
 * are recorded once per agreement, also when two race, and two instances needing the certificate
 * signing key for the first time at once end up with the same one.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isoAt } from '../../src/clock.js'
import { loadSigningKey, SIGNING_KEY_SETTING } from '../../src/services/signing-keys.js'
import { endAgreements, recordAgreement } from '../../src/storage/access-repository.js'
import { disposeDueAgreements } from '../../src/storage/agreement-dispositions.js'
import { agreementEnds, endStudentIds } from '../../src/storage/agreement-ends.js'
import { openStorage, type Storage } from '../../src/storage/connection.js'
import { attestDeletion } from '../../src/storage/deletion-attestations.js'
import { pageStudentChanges } from '../../src/storage/student-change-log.js'
import { linkStudents, upsertStudents } from '../../src/storage/student-import-repository.js'
import { createEndpoint } from '../../src/storage/webhook-endpoint-repository.js'
import { createTestStorage, type Fixtures, freshDatabaseUrl, START, STUDENTS, seedFixtures } from '../helper.js'

const DAY = 86_400_000

describe('the end of an agreement', () => {
  let storage: Storage
  let fixtures: Fixtures
  let acme: string
  let shareId: string
  const ended = START + DAY

  beforeAll(async () => {
    storage = await createTestStorage({ url: freshDatabaseUrl() })
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
  afterAll(async () => storage?.close())

  const linksOf = async (organisationId: string) =>
    (
      await storage.db
        .selectFrom('student_organisations')
        .select('student_id')
        .where('organisation_id', '=', organisationId)
        .orderBy('student_id')
        .execute()
    ).map((row) => row.student_id)
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
    expect(await endStudentIds(storage.db, end!)).toEqual([STUDENTS.ada, STUDENTS.ben, STUDENTS.dev].sort())
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
    expect(await endStudentIds(storage.db, end!)).toEqual([STUDENTS.ada, STUDENTS.ben, STUDENTS.dev].sort())

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
