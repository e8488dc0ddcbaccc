/**
 * The end of an agreement in the dashboard, on the clock: the partner's overview notice and Data
 * to delete page (deadline, count, the ids download recorded as disclosures, opened only from the
 * dashboard), the attestation behind a confirmation page (CSRF, partner role, once); the
 * operator's Ended agreements page and organisation section, and the audited certificate download
 * once the links have ended.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { endAgreements } from '../../src/cases/agreement-end.js'
import { recordAgreement } from '../../src/cases/agreement-record.js'
import { listDisclosures } from '../../src/storage/disclosure-log.js'
import { linkStudents, upsertStudents } from '../../src/storage/student-import-repository.js'
import { unlinkStudent } from '../../src/cases/unlink.js'
import { buildTestApp, STUDENTS } from '../helper.js'
import { DashboardClient, makeOwner, OPERATOR, signedInOperator } from './dashboard-client.js'
import { perSuite } from '../support/built.js'

const DAY = 86_400_000
const BASE = '/dashboard/partner/deletion'
const EVE = '55555555-5555-4555-8555-555555555555'

describe('the end of an agreement in the dashboard', () => {
  const t = perSuite(() => buildTestApp())
  let acme: DashboardClient
  let gamma: DashboardClient
  let operator: DashboardClient
  let agreementId: string
  let acmeAccount: string

  beforeAll(async () => {
    acme = new DashboardClient(t.app, '192.0.2.80')
    gamma = new DashboardClient(t.app, '192.0.2.81')
    for (const [client, email, organisationId] of [
      [acme, 'acme@partner.example', t.fixtures.orgs.acme],
      [gamma, 'gamma@partner.example', t.fixtures.orgs.gamma],
    ] as const) {
      expect((await client.signUp(email)).statusCode).toBe(200)
      await makeOwner(t.storage.db, email, organisationId)
    }
    acmeAccount = (
      await t.storage.db
        .selectFrom('accounts')
        .select('id')
        .where('email', '=', 'acme@partner.example')
        .executeTakeFirstOrThrow()
    ).id
    operator = await signedInOperator(t, '192.0.2.82')
    // Shared with Acme and unlinked under the agreement: still on the list of what to delete.
    await upsertStudents(t.storage.db, [{ id: EVE, firstName: 'Eve', tier: 'explorer' }], t.clock.now())
    await linkStudents(t.storage.db, [{ studentId: EVE, organisationId: t.fixtures.orgs.acme }], t.clock.now())
    await unlinkStudent(t.storage.db, EVE, t.fixtures.orgs.acme, t.clock.now())
    agreementId = (
      await t.storage.db
        .selectFrom('agreements')
        .select('id')
        .where('organisation_id', '=', t.fixtures.orgs.acme)
        .executeTakeFirstOrThrow()
    ).id
  })

  it('shows nothing to delete while the agreement is in force', async () => {
    expect((await acme.get('/dashboard/partner')).body).not.toContain('Data to delete')
    expect((await acme.get(BASE)).body).toContain('No data-sharing agreement of your organisation has ended')
  })

  it('tells the partner what to delete and by when once the agreement has ended', async () => {
    await endAgreements(t.storage.db, { organisationId: t.fixtures.orgs.acme }, t.clock.now())
    const overview = await acme.get('/dashboard/partner')
    const due = new Date(t.clock.now() + 30 * DAY).toISOString().slice(0, 10)
    expect(overview.body).toMatch(
      new RegExp(`delete\\s+what your organisation holds about 4 students by <strong>${due}</strong>`),
    )
    expect(overview.body).toContain(`href="${BASE}"`)
    const page = await acme.get(BASE)
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain(`<strong>${due}</strong>`)
    expect(page.body).toContain(`end on ${due}`)
    expect(page.body).toContain('4 students (3 linked now, 1 unlinked and 0 erased earlier)')
    expect(page.body).toContain(`href="${BASE}/${agreementId}/students.csv"`)
    expect(page.body).toContain(`href="${BASE}/${agreementId}/attest"`)
    // Gamma never had an agreement: nothing, and nothing of Acme's.
    expect((await gamma.get(BASE)).body).not.toContain(agreementId)
    expect((await gamma.get(`${BASE}/${agreementId}/students.csv`)).statusCode).toBe(404)
  })

  it('downloads the ids to delete, recorded in the disclosure log, and only from the dashboard', async () => {
    const elsewhere = await acme.get(`${BASE}/${agreementId}/students.csv`, { 'sec-fetch-site': 'cross-site' })
    expect(elsewhere.headers['content-type']).toMatch(/^text\/html/)
    expect(await listDisclosures(t.storage.db, { action: 'deletion.list' })).toEqual([])

    const csv = await acme.get(`${BASE}/${agreementId}/students.csv`)
    expect(csv.statusCode).toBe(200)
    expect(csv.headers['content-type']).toMatch(/^text\/csv/)
    const unlinkedAt = new Date(t.clock.now()).toISOString()
    expect(csv.body).toBe(
      `"student_id","asked_by","asked_at","webhook"\r\n${[STUDENTS.ada, STUDENTS.ben, STUDENTS.dev]
        .sort()
        .map((id) => `"${id}","disposition","",""\r\n`)
        .join('')}"${EVE}","student.unlinked","${unlinkedAt}","no_endpoint"\r\n`,
    )
    const rows = await listDisclosures(t.storage.db, { action: 'deletion.list' })
    expect(rows.map((row) => row.student_id).sort()).toEqual([STUDENTS.ada, STUDENTS.ben, STUDENTS.dev, EVE].sort())
    expect(rows.every((row) => row.key_id === `dashboard:${acmeAccount}` && row.outcome === 'disclosed')).toBe(true)
  })

  it('records the attestation after its confirmation page, with a valid token, by the partner, once', async () => {
    const attestations = () => t.storage.db.selectFrom('deletion_attestations').selectAll().execute()
    const confirm = await acme.get(`${BASE}/${agreementId}/attest`)
    expect(confirm.statusCode).toBe(200)
    expect(confirm.body).toContain(`action="${BASE}/${agreementId}/attest"`)
    expect(confirm.body).toContain('4 students')
    expect(await attestations()).toEqual([])

    for (const token of [null, 'forged'])
      expect((await acme.post(`${BASE}/${agreementId}/attest`, { _csrf: token })).statusCode).toBe(403)
    expect(
      (await acme.post(`${BASE}/${agreementId}/attest`, {}, { origin: 'https://elsewhere.example' })).statusCode,
    ).toBe(403)
    expect((await operator.post(`${BASE}/${agreementId}/attest`)).statusCode).toBe(403)
    expect((await gamma.post(`${BASE}/${agreementId}/attest`)).statusCode).toBe(404)
    expect(await attestations()).toEqual([])

    const done = await acme.post(`${BASE}/${agreementId}/attest`)
    expect(done.statusCode).toBe(303)
    expect(done.headers.location).toBe(`${BASE}?attested=${agreementId}`)
    expect((await acme.follow(done)).body).toContain('Your attestation for agreement DSA-Acme Learning was')
    expect(await attestations()).toEqual([
      {
        agreement_id: agreementId,
        organisation_id: t.fixtures.orgs.acme,
        attested_at: new Date(t.clock.now()).toISOString(),
        account_id: acmeAccount,
        key_id: null,
        students: 4,
      },
    ])
    const again = await acme.post(`${BASE}/${agreementId}/attest`)
    expect(again.statusCode).toBe(409)
    expect(again.body).toContain('attested already')
    expect((await acme.get('/dashboard/partner')).body).not.toContain('then attest it')
    expect((await acme.get('/dashboard/partner')).body).toContain('Every ended agreement\u2019s deletion is attested')
    expect((await acme.get(BASE)).body).toContain('by acme@partner.example in the dashboard')
  })

  it("shows the operator each end's state, and the certificate once the links have ended, audited", async () => {
    const list = await operator.get('/dashboard/operator/ended-agreements')
    expect(list.statusCode).toBe(200)
    expect(list.body).toContain('Acme Learning')
    expect(list.body).toContain('by acme@partner.example in the dashboard')
    expect(list.body).toContain('once the links have ended')
    const certificate = `/dashboard/operator/organisations/${t.fixtures.orgs.acme}/agreements/${agreementId}/certificate.json`
    expect(list.body).not.toContain(certificate)
    const early = await operator.get(certificate)
    expect(early.statusCode).toBe(409)

    t.clock.advance(30 * DAY)
    expect(await t.app.services.disposer.run()).toBe(1)
    // A month later: sessions have expired.
    expect((await operator.signIn(OPERATOR.email, OPERATOR.password)).statusCode).toBe(303)
    const organisation = await operator.get(`/dashboard/operator/organisations/${t.fixtures.orgs.acme}`)
    expect(organisation.body).toContain('After an agreement ends')
    expect(organisation.body).toContain(`href="${certificate}"`)
    expect(organisation.body).toContain(
      `ended ${new Date(t.clock.now()).toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    )

    const downloaded = await operator.get(certificate)
    expect(downloaded.statusCode).toBe(200)
    expect(JSON.parse(downloaded.body).certificate.students).toMatchObject({ count: 4, unlinkedEarlier: 1 })
    const audit = await t.storage.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'agreement.certificate')
      .execute()
    expect(audit.map((row) => [row.actor, row.target])).toEqual([
      [`account:${OPERATOR.email}`, `organisation:${t.fixtures.orgs.acme}`],
    ])
    expect(JSON.parse(audit[0]!.detail)).toMatchObject({ agreementId, students: 4, attested: true })
    // A partner is never handed it.
    expect((await acme.signIn('acme@partner.example')).statusCode).toBe(303)
    expect((await acme.get(certificate)).statusCode).toBe(403)
  })

  it('tells the partner which deadline applies once a later agreement has ended too', async () => {
    const renewed = t.clock.now() + DAY
    await recordAgreement(
      t.storage.db,
      { organisationId: t.fixtures.orgs.acme, signedAt: renewed, expiresAt: null, documentRef: 'DSA-RENEWED' },
      renewed,
    )
    t.clock.advance(2 * DAY)
    await endAgreements(t.storage.db, { organisationId: t.fixtures.orgs.acme }, t.clock.now())
    expect((await acme.signIn('acme@partner.example')).statusCode).toBe(303)
    const overview = (await acme.get('/dashboard/partner')).body
    expect(overview).toContain('Deadline that applies')
    const row = (ref: string) => overview.slice(overview.indexOf(`<td>${ref}</td>`)).split('</tr>')[0]!
    expect(row('DSA-RENEWED')).toMatch(/<strong>applies<\/strong>: delete by \d{4}-\d\d-\d\d everything on its list/)
    expect(row('DSA-Acme Learning')).toMatch(/applied: your links ended \d{4}-\d\d-\d\d/)
  })
})
