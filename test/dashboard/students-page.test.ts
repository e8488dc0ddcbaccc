/** A live partner's Students page: the linked students, searchable, each listed one recorded as a disclosure. */
import { beforeAll, describe, expect, it } from 'vitest'
import { listDisclosures } from '../../src/storage/disclosure-log.js'
import { buildTestApp, STUDENTS } from '../helper.js'
import { DashboardClient } from './dashboard-client.js'
import { perSuite } from '../support/built.js'

describe('the Students page', () => {
  const t = perSuite(() => buildTestApp())
  let acme: DashboardClient
  let gamma: DashboardClient
  let newcomer: DashboardClient

  beforeAll(async () => {
    acme = new DashboardClient(t.app, '192.0.2.20')
    gamma = new DashboardClient(t.app, '192.0.2.21')
    newcomer = new DashboardClient(t.app, '192.0.2.22')
    for (const [client, email] of [
      [acme, 'acme@partner.example'],
      [gamma, 'gamma@partner.example'],
      [newcomer, 'new@partner.example'],
    ] as const) {
      expect((await client.signUp(email)).statusCode).toBe(200)
    }
    // As if their applications had been approved: Acme has an agreement and students, Gamma neither.
    for (const [email, organisationId] of [
      ['acme@partner.example', t.fixtures.orgs.acme],
      ['gamma@partner.example', t.fixtures.orgs.gamma],
    ] as const) {
      await t.storage.db
        .updateTable('accounts')
        .set({ organisation_id: organisationId })
        .where('email', '=', email)
        .execute()
    }
  })

  it('lists the organisation’s students with copyable ids, records each one shown, and searches by name or id', async () => {
    const page = await acme.get('/dashboard/partner/students')
    expect(page.statusCode).toBe(200)
    for (const id of [STUDENTS.ada, STUDENTS.ben, STUDENTS.dev])
      expect(page.body).toContain(`<code data-copy>${id}</code>`)
    expect(page.body).not.toContain(STUDENTS.cleo)
    const shown = await listDisclosures(t.storage.db, { action: 'students.list', organisationId: t.fixtures.orgs.acme })
    expect(shown.map((row) => row.student_id).sort()).toEqual([STUDENTS.ada, STUDENTS.ben, STUDENTS.dev].sort())
    expect(shown[0]!.key_id).toMatch(/^dashboard:/)

    const byName = await acme.get('/dashboard/partner/students?q=AD')
    expect(byName.body).toContain(STUDENTS.ada)
    expect(byName.body).not.toContain(STUDENTS.ben)
    const byId = await acme.get(`/dashboard/partner/students?q=${STUDENTS.ben.slice(0, 8)}`)
    expect(byId.body).toContain(STUDENTS.ben)
    // LIKE's wildcards are taken literally.
    const wildcard = await acme.get('/dashboard/partner/students?q=%25')
    expect(wildcard.body).toContain('No linked student matches')
  })

  it('shows no student without an approved organisation or an agreement in force', async () => {
    for (const client of [gamma, newcomer]) {
      const page = await client.get('/dashboard/partner/students')
      expect(page.statusCode).toBe(200)
      expect(page.body).not.toContain('data-copy')
    }
    expect((await gamma.get('/dashboard/partner/students')).body).toContain('agreement is in force')
    expect((await newcomer.get('/dashboard/partner/students')).body).toContain('once your application is approved')
  })
})
