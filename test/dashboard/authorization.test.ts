/**
 * Who may open what: every dashboard route for an anonymous visitor, partner A, partner B and
 * the operator; CSRF refusal (more in csrf.test.ts); sign-in limiting (more in
 * sign-in-limits.test.ts); the application state machine over HTTP; and the session cookie's
 * attributes.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { listApiKeys } from '../../src/storage/access-repository.js'
import { createSchool } from '../../src/cases/schools.js'
import { listShares } from '../../src/storage/share-listing-repository.js'
import { buildTestApp, STUDENTS } from '../helper.js'
import { createOperatorWithAuthenticator, DashboardClient } from './dashboard-client.js'
import { perSuite } from '../support/built.js'
import { allLinks } from '../support/linked-students.js'

type Actor = 'anonymous' | 'partnerA' | 'partnerB' | 'operator'

describe('dashboard authorization', () => {
  const t = perSuite(() => buildTestApp({ env: { SIGN_IN_FAILURE_LIMIT: '5' } }))
  const clients = {} as Record<Actor, DashboardClient>
  let orgA: string
  let applicationA: string
  let applicationB: string
  let keyA: string
  let agreementA: string
  let viewA: string
  let shareAcme: string
  let schoolA: string

  beforeAll(async () => {
    clients.anonymous = new DashboardClient(t.app, '192.0.2.1')
    clients.partnerA = new DashboardClient(t.app, '192.0.2.2')
    clients.partnerB = new DashboardClient(t.app, '192.0.2.3')
    clients.operator = new DashboardClient(t.app, '192.0.2.4')
    clients.operator.authenticator = await createOperatorWithAuthenticator(t.storage.db, t.clock)
    expect((await clients.partnerA.signUp('a@partner-a.example')).statusCode).toBe(200)
    expect((await clients.partnerB.signUp('b@partner-b.example')).statusCode).toBe(200)
    expect((await clients.partnerA.useMailedLink(t.storage.db, 'a@partner-a.example')).statusCode).toBe(303)
    expect((await clients.partnerB.useMailedLink(t.storage.db, 'b@partner-b.example')).statusCode).toBe(303)
    expect((await clients.operator.signIn('ops@example.org', 'operator password 2026')).statusCode).toBe(303)
    const apply = (client: DashboardClient, name: string) =>
      client.post('/dashboard/partner/application', {
        organisationName: name,
        website: `https://${name.toLowerCase().replace(/ /g, '-')}.example`,
        contactName: 'Contact Person',
        contactEmail: 'contact@example.org',
        intendedUse: 'Showing learners their next lesson in our reading app.',
        scopes: ['students:read'],
        acknowledgement: 'yes',
      })
    expect((await apply(clients.partnerA, 'Partner A')).statusCode).toBe(303)
    expect((await apply(clients.partnerB, 'Partner B')).statusCode).toBe(303)
    const applications = await t.storage.db.selectFrom('applications').select(['id', 'organisation_name']).execute()
    applicationA = applications.find((a) => a.organisation_name === 'Partner A')!.id
    applicationB = applications.find((a) => a.organisation_name === 'Partner B')!.id
    expect(
      (
        await clients.operator.post(`/dashboard/operator/applications/${applicationA}/approve`, {
          scopes: ['students:read'],
        })
      ).statusCode,
    ).toBe(303)
    orgA = (
      await t.storage.db
        .selectFrom('organisations')
        .select('id')
        .where('name', '=', 'Partner A')
        .executeTakeFirstOrThrow()
    ).id
    expect(
      (
        await clients.operator.post(`/dashboard/operator/organisations/${orgA}/agreements`, {
          signed: '2026-01-01',
          document: 'DSA-A',
          purpose: 'Reading practice',
          data: ['first_name', 'tier', 'progress'],
          disposition: '30',
        })
      ).statusCode,
    ).toBe(303)
    agreementA = (
      await t.storage.db
        .selectFrom('agreements')
        .select('id')
        .where('organisation_id', '=', orgA)
        .executeTakeFirstOrThrow()
    ).id
    const created = await clients.partnerA.post('/dashboard/partner/keys', {
      mode: 'live',
      'live-name': 'prod',
      scopes: ['students:read'],
    })
    expect(created.statusCode).toBe(303)
    viewA = created.headers.location!.split('/').pop()!
    keyA = (await listApiKeys(t.storage.db, orgA))[0]!.id
    shareAcme = (await listShares(t.storage.db, t.fixtures.orgs.acme))[0]!.id
    schoolA = (await createSchool(t.storage.db, { name: 'School A' }, t.clock.now())).id
  })

  const PAGES: [string, Record<Actor, number>][] = [
    ['/dashboard/partner', { anonymous: 303, partnerA: 200, partnerB: 200, operator: 403 }],
    ['/dashboard/partner/application', { anonymous: 303, partnerA: 200, partnerB: 200, operator: 403 }],
    ['/dashboard/partner/usage', { anonymous: 303, partnerA: 200, partnerB: 200, operator: 403 }],
    ['/dashboard/partner/request-log', { anonymous: 303, partnerA: 200, partnerB: 200, operator: 403 }],
    ['/dashboard/partner/disclosures', { anonymous: 303, partnerA: 200, partnerB: 200, operator: 403 }],
    ['/dashboard/partner/students', { anonymous: 303, partnerA: 200, partnerB: 200, operator: 403 }],
    ['/dashboard/partner/webhooks', { anonymous: 303, partnerA: 200, partnerB: 200, operator: 403 }],
    ['/dashboard/partner/deletion', { anonymous: 303, partnerA: 200, partnerB: 200, operator: 403 }],
    // Agreement A is in force: nothing to delete, nothing to attest.
    ['/dashboard/partner/deletion/AGREEMENT_A/attest', { anonymous: 303, partnerA: 404, partnerB: 404, operator: 403 }],
    ['/dashboard/partner/keys/shown/VIEW_A', { anonymous: 303, partnerA: 200, partnerB: 410, operator: 403 }],
    ['/dashboard/partner/keys/KEY_A/revoke', { anonymous: 303, partnerA: 200, partnerB: 404, operator: 403 }],
    ['/dashboard/operator', { anonymous: 303, partnerA: 403, partnerB: 403, operator: 303 }],
    ['/dashboard/operator/applications', { anonymous: 303, partnerA: 403, partnerB: 403, operator: 200 }],
    ['/dashboard/operator/organisations', { anonymous: 303, partnerA: 403, partnerB: 403, operator: 200 }],
    ['/dashboard/operator/ended-agreements', { anonymous: 303, partnerA: 403, partnerB: 403, operator: 200 }],
    ['/dashboard/operator/request-log', { anonymous: 303, partnerA: 403, partnerB: 403, operator: 200 }],
    [
      '/dashboard/operator/organisations/ORG_A/agreements/AGREEMENT_A/certificate.json',
      { anonymous: 303, partnerA: 403, partnerB: 403, operator: 404 },
    ],
    ['/dashboard/operator/organisations/ORG_A', { anonymous: 303, partnerA: 403, partnerB: 403, operator: 200 }],
    [
      '/dashboard/operator/organisations/ORG_A/keys/KEY_A/revoke',
      { anonymous: 303, partnerA: 403, partnerB: 403, operator: 200 },
    ],
    [
      '/dashboard/operator/organisations/ORG_A/suspend',
      { anonymous: 303, partnerA: 403, partnerB: 403, operator: 200 },
    ],
    [
      '/dashboard/operator/organisations/ACME/students',
      { anonymous: 303, partnerA: 403, partnerB: 403, operator: 200 },
    ],
    [
      '/dashboard/operator/organisations/ACME/students/ADA/unlink',
      { anonymous: 303, partnerA: 403, partnerB: 403, operator: 200 },
    ],
    ['/dashboard/operator/students?id=ADA', { anonymous: 303, partnerA: 403, partnerB: 403, operator: 200 }],
    ['/dashboard/operator/schools', { anonymous: 303, partnerA: 403, partnerB: 403, operator: 200 }],
    ['/dashboard/operator/organisations/ACME/shared', { anonymous: 303, partnerA: 403, partnerB: 403, operator: 200 }],
    [
      '/dashboard/operator/organisations/ACME/shares/SHARE_ACME/end',
      { anonymous: 303, partnerA: 403, partnerB: 403, operator: 200 },
    ],
    // A share is reached through its own organisation only.
    [
      '/dashboard/operator/organisations/ORG_A/shares/SHARE_ACME/end',
      { anonymous: 303, partnerA: 403, partnerB: 403, operator: 404 },
    ],
    ['/dashboard/operator/disclosures', { anonymous: 303, partnerA: 403, partnerB: 403, operator: 200 }],
    ['/dashboard/operator/disclosures.csv', { anonymous: 303, partnerA: 403, partnerB: 403, operator: 200 }],
    ...['', '.csv', '.json'].map((suffix): [string, Record<Actor, number>] => [
      `/dashboard/operator/students/11111111-1111-4111-8111-111111111111/disclosures${suffix}`,
      { anonymous: 303, partnerA: 403, partnerB: 403, operator: 200 },
    ]),
    [
      '/dashboard/operator/students/not-a-student/disclosures',
      { anonymous: 303, partnerA: 403, partnerB: 403, operator: 404 },
    ],
    ['/dashboard/operator/audit', { anonymous: 303, partnerA: 403, partnerB: 403, operator: 200 }],
    ['/dashboard/operator/outbox', { anonymous: 303, partnerA: 403, partnerB: 403, operator: 200 }],
    ['/dashboard/operator/lti', { anonymous: 303, partnerA: 403, partnerB: 403, operator: 200 }],
    ['/dashboard/operator/lti/registrations/new', { anonymous: 303, partnerA: 403, partnerB: 403, operator: 200 }],
    ['/dashboard/operator/lti/key/rotate', { anonymous: 303, partnerA: 403, partnerB: 403, operator: 200 }],
    // Partner A owns its organisation; partner B has none yet, so nothing to show.
    ['/dashboard/partner/lti', { anonymous: 303, partnerA: 200, partnerB: 200, operator: 403 }],
    // The operator here is an admin; operators-pages.test.ts refuses the page to an operator who is not.
    ['/dashboard/operator/operators', { anonymous: 303, partnerA: 403, partnerB: 403, operator: 200 }],
    ['/dashboard/login', { anonymous: 200, partnerA: 303, partnerB: 303, operator: 303 }],
    ['/dashboard/signup', { anonymous: 200, partnerA: 200, partnerB: 200, operator: 200 }],
    ['/dashboard/assets/dashboard.css', { anonymous: 200, partnerA: 200, partnerB: 200, operator: 200 }],
    ['/dashboard/no-such-page', { anonymous: 404, partnerA: 404, partnerB: 404, operator: 404 }],
    ['/dashboard', { anonymous: 303, partnerA: 303, partnerB: 303, operator: 303 }],
  ]

  for (const [page, expected] of PAGES) {
    for (const actor of Object.keys(expected) as Actor[]) {
      it(`GET ${page} as ${actor}: ${expected[actor]}`, async () => {
        const res = await clients[actor].get(
          page
            .replace('ORG_A', orgA)
            .replace('KEY_A', keyA)
            .replace('VIEW_A', viewA)
            .replace('SHARE_ACME', shareAcme)
            .replace('AGREEMENT_A', agreementA)
            .replace('ACME', t.fixtures.orgs.acme)
            .replace('ADA', STUDENTS.ada),
        )
        expect(res.statusCode).toBe(expected[actor])
        if (res.statusCode === 303 && actor === 'anonymous') expect(res.headers.location).toMatch(/^\/dashboard\/login/)
        expect(res.headers['content-security-policy']).toContain("default-src 'none'")
        if (res.headers['content-type']?.toString().startsWith('text/html')) {
          expect(res.headers['cache-control']).toBe('no-store')
          expect(res.headers['access-control-allow-origin']).toBeUndefined()
        }
      })
    }
  }

  // Actions nobody but their owner may take: each must leave the data as it is.
  const ACTIONS: [string, Record<string, string | string[]>, Partial<Record<Actor, number>>][] = [
    ['/dashboard/partner/keys/KEY_A/revoke', {}, { anonymous: 303, partnerB: 404, operator: 403 }],
    // Another account's hide finds nothing of its own to hide: 303, and partner A's view stays.
    ['/dashboard/partner/keys/shown/VIEW_A/hide', {}, { anonymous: 303, partnerB: 303, operator: 403 }],
    ['/dashboard/partner/keys', { mode: 'live', 'live-name': 'x' }, { anonymous: 303, partnerB: 403, operator: 403 }],
    [
      '/dashboard/operator/applications/APP_B/approve',
      { scopes: ['students:read'] },
      { anonymous: 303, partnerA: 403, partnerB: 403 },
    ],
    [
      '/dashboard/operator/applications/APP_B/reject',
      { 'reason-APP_B': 'no' },
      { anonymous: 303, partnerA: 403, partnerB: 403 },
    ],
    ['/dashboard/operator/organisations/ORG_A/suspend', {}, { anonymous: 303, partnerA: 403, partnerB: 403 }],
    ['/dashboard/operator/organisations/ORG_A/reinstate', {}, { anonymous: 303, partnerA: 403, partnerB: 403 }],
    [
      '/dashboard/partner/application',
      {
        organisationName: 'Sneaky',
        website: 'https://x.example',
        contactName: 'X Y',
        contactEmail: 'x@y.example',
        intendedUse: 'twenty characters or more here',
      },
      { anonymous: 303, operator: 403 },
    ],
    [
      '/dashboard/operator/organisations/ORG_A/agreements',
      { signed: '2026-01-01', document: 'X' },
      { anonymous: 303, partnerA: 403, partnerB: 403 },
    ],
    [
      '/dashboard/operator/organisations/ORG_A/agreements/AGREEMENT_A/end',
      {},
      { anonymous: 303, partnerA: 403, partnerB: 403 },
    ],
    ['/dashboard/operator/organisations/ORG_A/keys/KEY_A/revoke', {}, { anonymous: 303, partnerA: 403, partnerB: 403 }],
    [
      '/dashboard/partner/deletion/AGREEMENT_A/attest',
      {},
      { anonymous: 303, partnerA: 404, partnerB: 404, operator: 403 },
    ],
    [
      '/dashboard/operator/organisations/ACME/students/ADA/unlink',
      {},
      { anonymous: 303, partnerA: 403, partnerB: 403 },
    ],
    [
      '/dashboard/operator/students/erase',
      { id: 'ADA', confirm: 'ADA' },
      { anonymous: 303, partnerA: 403, partnerB: 403 },
    ],
    ['/dashboard/operator/schools', { name: 'Sneaky School' }, { anonymous: 303, partnerA: 403, partnerB: 403 }],
    [
      '/dashboard/operator/organisations/ACME/shares/school',
      { school: 'SCHOOL_A' },
      { anonymous: 303, partnerA: 403, partnerB: 403 },
    ],
    [
      '/dashboard/operator/organisations/ACME/shares/list',
      { students: 'CLEO', label: 'Sneaky list' },
      { anonymous: 303, partnerA: 403, partnerB: 403 },
    ],
    [
      '/dashboard/operator/organisations/ACME/shares/SHARE_ACME/end',
      {},
      { anonymous: 303, partnerA: 403, partnerB: 403 },
    ],
    // Another organisation's share: not found, and not ended.
    ['/dashboard/operator/organisations/ORG_A/shares/SHARE_ACME/end', {}, { operator: 404 }],
    ['/dashboard/operator/outbox/test', { to: 'x@example.org' }, { anonymous: 303, partnerA: 403, partnerB: 403 }],
    ['/dashboard/operator/lti/links', { organisation: 'ORG_A' }, { anonymous: 303, partnerA: 403, partnerB: 403 }],
    ['/dashboard/operator/lti/key/rotate', {}, { anonymous: 303, partnerA: 403, partnerB: 403 }],
    [
      '/dashboard/operator/operators/invite',
      { email: 'x@example.org', role: 'admin' },
      { anonymous: 303, partnerA: 403, partnerB: 403 },
    ],
    [
      '/dashboard/operator/outbox/999999/send-again',
      {},
      { anonymous: 303, partnerA: 403, partnerB: 403, operator: 404 },
    ],
  ]

  for (const [action, form, expected] of ACTIONS) {
    for (const actor of Object.keys(expected) as Actor[]) {
      it(`POST ${action} as ${actor}: ${expected[actor]}, nothing changes`, async () => {
        const fill = (s: string) =>
          s
            .replace('ORG_A', orgA)
            .replace('KEY_A', keyA)
            .replace(/APP_B/g, applicationB)
            .replace('AGREEMENT_A', agreementA)
            .replace('VIEW_A', viewA)
            .replace('SHARE_ACME', shareAcme)
            .replace('SCHOOL_A', schoolA)
            .replace('ACME', t.fixtures.orgs.acme)
            .replace('ADA', STUDENTS.ada)
            .replace('CLEO', STUDENTS.cleo)
        const before = await snapshot()
        const res = await clients[actor].post(
          fill(action),
          Object.fromEntries(Object.entries(form).map(([k, v]) => [fill(k), typeof v === 'string' ? fill(v) : v])),
        )
        expect(res.statusCode).toBe(expected[actor])
        expect(await snapshot()).toEqual(before)
      })
    }
  }

  async function snapshot() {
    const db = t.storage.db
    return {
      keys: await db.selectFrom('api_keys').select(['id', 'revoked_at']).orderBy('id').execute(),
      applications: await db.selectFrom('applications').select(['id', 'state']).orderBy('id').execute(),
      organisations: await db.selectFrom('organisations').select(['id', 'status']).orderBy('id').execute(),
      agreements: await db.selectFrom('agreements').select(['id', 'ended_at']).orderBy('id').execute(),
      keyViews: await db.selectFrom('key_views').select(['id', 'account_id']).orderBy('id').execute(),
      attestations: await db.selectFrom('deletion_attestations').selectAll().execute(),
      students: await db.selectFrom('students').select('id').orderBy('id').execute(),
      schools: await db.selectFrom('schools').select('id').orderBy('id').execute(),
      shares: await db.selectFrom('shares').select(['id', 'ended_at']).orderBy('id').execute(),
      links: await allLinks(db),
      mail: await db.selectFrom('mail_outbox').selectAll().orderBy('id').execute(),
      ltiLinks: await db.selectFrom('lti_registration_links').selectAll().orderBy('id').execute(),
      settings: await db.selectFrom('settings').select('name').orderBy('name').execute(),
    }
  }

  it('never shows partner A anything of partner B', async () => {
    const pageA = (await clients.partnerA.get('/dashboard/partner')).body
    const pageB = (await clients.partnerB.get('/dashboard/partner')).body
    expect(pageA).toContain('Partner A')
    expect(pageA).not.toContain('Partner B')
    expect(pageA).not.toContain('b@partner-b.example')
    expect(pageB).not.toContain('Partner A')
    const sandboxB = (
      await t.storage.db
        .selectFrom('accounts')
        .select('sandbox_organisation_id')
        .where('email', '=', 'b@partner-b.example')
        .executeTakeFirstOrThrow()
    ).sandbox_organisation_id!
    const studentsB = await t.storage.db
      .selectFrom('student_organisations')
      .select('student_id')
      .where('organisation_id', '=', sandboxB)
      .execute()
    for (const { student_id } of studentsB) expect(pageA).not.toContain(student_id)
  })

  it('refuses a form without the CSRF token, with a wrong one, or with another visitor’s', async () => {
    const url = `/dashboard/operator/organisations/${orgA}/suspend`
    const other = await clients.partnerA.csrf()
    for (const token of [null, '', 'forged', other]) {
      const res = await clients.operator.post(url, { _csrf: token })
      expect(res.statusCode, String(token)).toBe(403)
      expect(res.body).toContain('This form has expired')
    }
    const org = await t.storage.db
      .selectFrom('organisations')
      .select('status')
      .where('id', '=', orgA)
      .executeTakeFirstOrThrow()
    expect(org.status).toBe('active')
  })

  it('sets the session cookie httpOnly, SameSite=Lax, scoped to /dashboard, and rotates it at sign-in', async () => {
    const client = new DashboardClient(t.app, '192.0.2.50')
    const before = await client.csrf()
    const res = await client.signIn('a@partner-a.example')
    const cookies = ([] as string[]).concat(res.headers['set-cookie'] as string | string[])
    const session = cookies.find((c) => c.startsWith('cur_session='))!
    expect(session).toMatch(/HttpOnly/)
    expect(session).toMatch(/SameSite=Lax/)
    expect(session).toMatch(/Path=\/dashboard/)
    expect(session).not.toMatch(/Secure/) // plain HTTP here; over TLS it is added
    expect(await client.csrf()).not.toBe(before)
    // Forwarded headers are ignored unless TRUST_PROXY says the proxy is ours.
    const spoofed = await t.app.inject({
      method: 'GET',
      url: '/dashboard/login',
      headers: { 'x-forwarded-proto': 'https' },
    })
    expect(String(spoofed.headers['set-cookie'])).not.toMatch(/Secure/)
  })

  it('marks cookies Secure when the request came over TLS', async () => {
    const behindProxy = await buildTestApp({ env: { TRUST_PROXY: 'true' } })
    const res = await behindProxy.app.inject({
      method: 'GET',
      url: '/dashboard/login',
      headers: { 'x-forwarded-proto': 'https' },
    })
    expect(String(res.headers['set-cookie'])).toMatch(
      /^__Host-cur_csrf=[\w-]+; Path=\/; HttpOnly; SameSite=Lax; Secure$/,
    )
    await behindProxy.close()
  })

  it('limits failed sign-ins per account and address, even with the right password afterwards', async () => {
    const attacker = new DashboardClient(t.app, '198.51.100.77')
    for (let i = 0; i < 5; i++)
      expect((await attacker.signIn('a@partner-a.example', `wrong password ${i} x`)).statusCode).toBe(401)
    const blocked = await attacker.signIn('a@partner-a.example')
    expect(blocked.statusCode).toBe(429)
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0)
    // Only that address waits: the account's owner elsewhere is not locked out.
    const elsewhere = new DashboardClient(t.app, '198.51.100.78')
    expect((await elsewhere.signIn('a@partner-a.example')).statusCode).toBe(303)
    t.clock.advance(16 * 60_000)
    expect((await attacker.signIn('a@partner-a.example')).statusCode).toBe(303)
  })

  it('enforces the application state machine over HTTP', async () => {
    const again = await clients.operator.post(`/dashboard/operator/applications/${applicationA}/approve`, {
      scopes: ['students:read'],
    })
    expect(again.statusCode).toBe(409)
    expect(again.body).toContain('already approved')
    const rejectApproved = await clients.operator.post(`/dashboard/operator/applications/${applicationA}/reject`, {
      [`reason-${applicationA}`]: 'late',
    })
    expect(rejectApproved.statusCode).toBe(409)
    const reinstateActive = await clients.operator.post(`/dashboard/operator/organisations/${orgA}/reinstate`)
    expect(reinstateActive.statusCode).toBe(409)
    expect(reinstateActive.body).toContain('not suspended')
    const emptyReason = await clients.operator.post(`/dashboard/operator/applications/${applicationB}/reject`, {
      [`reason-${applicationB}`]: '',
    })
    expect(emptyReason.statusCode).toBe(400)
    const rejected = await clients.operator.post(`/dashboard/operator/applications/${applicationB}/reject`, {
      [`reason-${applicationB}`]: 'We could not verify the organisation.',
    })
    expect(rejected.statusCode).toBe(303)
    const partnerView = await clients.partnerB.get('/dashboard/partner/application')
    expect(partnerView.body).toContain('We could not verify the organisation.')
    // A rejected partner may apply again.
    expect(partnerView.body).toContain('Submit application')
  })

  it('records every operator action in the audit log', async () => {
    const audit = await t.storage.db.selectFrom('audit_log').select(['actor', 'action']).execute()
    const actions = audit.map((row) => row.action)
    expect(actions).toEqual(expect.arrayContaining(['application.approve', 'agreement.record', 'application.reject']))
    // Each account's own actions (verifying its address) are its own; every other row is the operator's.
    const operators = audit.filter((row) => !row.action.startsWith('account.'))
    expect(operators.every((row) => row.actor === 'account:ops@example.org')).toBe(true)
    expect(
      audit
        .filter((row) => row.action === 'account.email-verified')
        .map((row) => row.actor)
        .sort(),
    ).toEqual(['account:a@partner-a.example', 'account:b@partner-b.example'])
  })

  it('lets a partner give a live key only the scopes granted, and student scopes only under an agreement', async () => {
    const refused = await clients.partnerA.post('/dashboard/partner/keys', {
      mode: 'live',
      'live-name': 'writer',
      scopes: ['students:write'],
    })
    expect(refused.statusCode).toBe(403)
    const none = await clients.partnerB.post('/dashboard/partner/keys', { mode: 'live', 'live-name': 'x' })
    expect(none.statusCode).toBe(403)
  })

  it('exports the disclosure log as CSV with formula-looking cells neutralised', async () => {
    const res = await clients.operator.get('/dashboard/operator/disclosures.csv')
    expect(res.headers['content-type']).toMatch(/^text\/csv/)
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="disclosures-\d{4}-\d\d-\d\d\.csv"$/)
    expect(res.body.split('\r\n')[0]).toBe('at,organisation_id,key_id,student_id,action,outcome,request_id')
  })
})
