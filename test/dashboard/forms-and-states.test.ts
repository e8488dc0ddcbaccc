/**
 * What the dashboard's forms and states say: revoking a key and suspending an organisation ask
 * first and name what stops; an agreement shows its real state (in force, starts on, expired
 * on); a form error comes back inline with the input kept; a key needs a name; the website must
 * be https; times say UTC.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { listApiKeys } from '../../src/storage/access-repository.js'
import { buildTestApp } from '../helper.js'
import { DashboardClient, makeOwner, signedInOperator } from './dashboard-client.js'
import { perSuite } from '../support/built.js'

const TERMS = {
  purpose: 'Reading practice: show each learner their next lesson',
  data: ['first_name', 'tier', 'progress'],
  disposition: '30',
}

describe('dashboard forms and states', () => {
  const t = perSuite(() => buildTestApp())
  let partner: DashboardClient
  let operator: DashboardClient
  let org: string

  beforeAll(async () => {
    operator = await signedInOperator(t, '192.0.2.70')
    partner = new DashboardClient(t.app, '192.0.2.71')
    await partner.signUp('forms@partner.example')
    org = t.fixtures.orgs.gamma // no agreement yet
    await makeOwner(t.storage.db, 'forms@partner.example', org)
  })

  const orgPage = () => `/dashboard/operator/organisations/${org}`

  /** The agreement form as an operator fills it: `form` over a purpose, all data and 30 days. */
  async function recordAgreement(form: Record<string, string | string[]>) {
    const res = await operator.post(`${orgPage()}/agreements`, { ...TERMS, ...form })
    return { res, page: await operator.follow(res) }
  }

  it('shows an agreement signed in the future as starting on its date, not as opening student endpoints', async () => {
    const { res, page } = await recordAgreement({ signed: '2026-04-01', document: 'DSA-FUTURE' })
    expect(res.statusCode).toBe(303)
    expect(page.body).not.toContain('Student endpoints work for this organisation')
    expect(page.body).toContain('Agreement DSA-FUTURE was recorded. It is not in force (it starts on 2026-04-01)')
    expect(page.body).toContain('Student endpoints stay refused.')
    expect(page.body).toContain('<span class="state pending">starts on 2026-04-01</span>')
  })

  it('shows an agreement that has already expired as expired on its date', async () => {
    const { page } = await recordAgreement({ signed: '2025-01-01', expires: '2025-06-01', document: 'DSA-OLD' })
    expect(page.body).not.toContain('Student endpoints work for this organisation')
    expect(page.body).toContain('It is not in force (it expired on 2025-06-01)')
    expect(page.body).toContain('<span class="state expired">expired on 2025-06-01</span>')
  })

  it('says an agreement in force opens student endpoints', async () => {
    const { page } = await recordAgreement({ signed: '2026-03-01', expires: '2027-03-01', document: 'DSA-NOW' })
    expect(page.body).toContain(
      'Agreement DSA-NOW was recorded. It is in force: student endpoints work for this organisation.',
    )
    expect(page.body).toContain('<span class="state active">in force</span>')
  })

  it('shows an agreement error inline, on the organisation page, with the input kept', async () => {
    const before = await t.storage.db.selectFrom('agreements').select('id').execute()
    const res = await operator.post(`${orgPage()}/agreements`, {
      ...TERMS,
      signed: '2026-05-01',
      expires: '2026-04-01',
      document: 'DSA-BACKWARDS',
    })
    expect(res.statusCode).toBe(400)
    expect(res.body).toContain('<h1>Gamma Apps</h1>')
    expect(res.body).toContain(
      '<p class="field-error" id="expires-error">The expiry date must be after the signing date.</p>',
    )
    expect(res.body).toMatch(/id="expires" name="expires" type="date" value="2026-04-01"[^>]* aria-invalid="true"/)
    expect(res.body).toContain('value="2026-05-01"')
    expect(res.body).toContain('value="DSA-BACKWARDS"')
    expect(res.body).toContain('<details open>')
    expect(await t.storage.db.selectFrom('agreements').select('id').execute()).toEqual(before)
  })

  it("records an agreement's purpose, data shared and disposition rule, and shows them to its partner", async () => {
    const { page } = await recordAgreement({
      signed: '2026-03-01',
      expires: '2027-03-01',
      document: 'DSA-TERMS',
      purpose: '  Tier placement\r\nonly  ',
      data: ['tier', 'first_name'],
      disposition: '45',
    })
    const row = await t.storage.db
      .selectFrom('agreements')
      .selectAll()
      .where('document_ref', '=', 'DSA-TERMS')
      .executeTakeFirstOrThrow()
    expect([row.purpose, row.data_categories, row.disposition_days]).toEqual([
      'Tier placement only',
      'first_name tier',
      45,
    ])
    const cells =
      '<td>Tier placement only</td><td>first name and tier</td><td>delete within 45 days of its end (by 2027-04-15)</td>'
    expect(page.body).toContain(cells)
    const audit = await t.storage.db
      .selectFrom('audit_log')
      .select('detail')
      .where('action', '=', 'agreement.record')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow()
    expect(JSON.parse(audit.detail)).toMatchObject({
      purpose: 'Tier placement only',
      data: 'first_name tier',
      dispositionDays: 45,
    })
    // The partner of the organisation reads the same terms on its overview, with the term.
    const overview = await partner.get('/dashboard/partner')
    expect(overview.body).toContain('<h3>Data-sharing agreements</h3>')
    expect(overview.body).toContain(`<td>2026-03-01 to 2027-03-01</td>${cells}`)
  })

  it('requires a purpose, at least one kind of data and a disposition period, each inline with the input kept', async () => {
    const before = await t.storage.db.selectFrom('agreements').select('id').execute()
    const fresh = await operator.get(orgPage())
    // A new form starts with every kind of data and the configured period.
    expect(fresh.body).toMatch(/<input type="checkbox" name="data" value="progress" checked>/)
    expect(fresh.body).toMatch(/id="disposition" name="disposition" type="number" value="30"/)
    const res = await operator.post(`${orgPage()}/agreements`, {
      signed: '2026-05-01',
      document: 'DSA-NO-TERMS',
      purpose: ' \n ',
      disposition: '-1',
    })
    expect(res.statusCode).toBe(400)
    for (const message of [
      '<p class="field-error" id="purpose-error">Enter the purpose: what the partner may use the data for, as the agreement says.</p>',
      '<p class="field-error" id="data-error">Choose at least one kind of data the agreement shares.</p>',
      '<p class="field-error" id="disposition-error">Enter the days after the end within which the partner must delete the data: 0 to 3650.</p>',
    ])
      expect(res.body).toContain(message)
    expect(res.body).not.toMatch(/name="data" value="\w+" checked/)
    expect(res.body).toMatch(/id="disposition" name="disposition" type="number" value="-1"/)
    expect(res.body).toContain('value="DSA-NO-TERMS"')
    const long = await operator.post(`${orgPage()}/agreements`, {
      ...TERMS,
      signed: '2026-05-01',
      document: 'DSA-LONG',
      purpose: 'x'.repeat(1001),
      disposition: '3651',
    })
    expect(long.statusCode).toBe(400)
    expect(long.body).toContain('Shorten the purpose to 1000 characters or fewer.')
    expect(long.body).toContain('id="disposition-error"')
    expect(await t.storage.db.selectFrom('agreements').select('id').execute()).toEqual(before)
  })

  it('shows a missing rejection reason inline, in the review queue', async () => {
    const client = new DashboardClient(t.app, '192.0.2.73')
    await client.signUp('queue@partner.example')
    await client.useMailedLink(t.storage.db, 'queue@partner.example')
    await client.post('/dashboard/partner/application', {
      organisationName: 'Queue Ltd',
      website: 'https://queue.example',
      contactName: 'Quinn Queue',
      contactEmail: 'quinn@queue.example',
      intendedUse: 'Showing learners their next lesson in our reading app.',
    })
    const { id } = await t.storage.db
      .selectFrom('applications')
      .select('id')
      .where('organisation_name', '=', 'Queue Ltd')
      .executeTakeFirstOrThrow()
    const res = await operator.post(`/dashboard/operator/applications/${id}/reject`, { [`reason-${id}`]: ' ' })
    expect(res.statusCode).toBe(400)
    expect(res.body).toContain('<h1>Applications</h1>')
    expect(res.body).toContain(
      `<p class="field-error" id="reason-${id}-error">Write the reason for the rejection: the partner sees it.</p>`,
    )
    expect(res.body).toContain(`<a href="#reason-${id}">`)
    expect(
      (await t.storage.db.selectFrom('applications').select('state').where('id', '=', id).executeTakeFirstOrThrow())
        .state,
    ).toBe('submitted')
  })

  it('asks before revoking a key, naming it and what breaks; the link alone changes nothing', async () => {
    expect(
      (await partner.post('/dashboard/partner/keys', { mode: 'live', 'live-name': 'payments sync' })).statusCode,
    ).toBeLessThan(400)
    const key = (await listApiKeys(t.storage.db, org)).find((k) => k.name === 'payments sync')!
    const overview = await partner.get('/dashboard/partner')
    // The table links to the question; no form on the overview revokes in one click.
    expect(overview.body).not.toContain(`action="/dashboard/partner/keys/${key.id}/revoke"`)
    expect(overview.body).toContain(`href="/dashboard/partner/keys/${key.id}/revoke"`)
    for (const [client, url] of [
      [partner, `/dashboard/partner/keys/${key.id}/revoke`],
      [operator, `${orgPage()}/keys/${key.id}/revoke`],
    ] as const) {
      const ask = await client.get(url)
      expect(ask.statusCode).toBe(200)
      expect(ask.body).toContain('<h1>Revoke this key?</h1>')
      expect(ask.body).toContain('<strong>payments sync</strong>')
      expect(ask.body).toContain(`<code>${key.display_prefix}…</code>`)
      expect(ask.body).toContain('Every integration that uses it gets <strong>401 Unauthorized</strong> within seconds')
      expect(ask.body).toContain(`action="${url}"`)
    }
    // The operator, who sees every organisation's keys, is told whose key it is.
    expect((await operator.get(`${orgPage()}/keys/${key.id}/revoke`)).body).toContain('live, of Gamma Apps)')
    expect((await listApiKeys(t.storage.db, org)).find((k) => k.id === key.id)!.revoked_at).toBeNull()
    const revoke = await partner.post(`/dashboard/partner/keys/${key.id}/revoke`)
    expect(revoke.statusCode).toBe(303)
    expect((await listApiKeys(t.storage.db, org)).find((k) => k.id === key.id)!.revoked_at).not.toBeNull()
    expect((await partner.get(`/dashboard/partner/keys/${key.id}/revoke`)).body).toContain('is revoked already')
  })

  it('requires a key name, and keeps the input of a refused key form', async () => {
    const before = await t.storage.db.selectFrom('api_keys').select('id').execute()
    const res = await partner.post('/dashboard/partner/keys', {
      mode: 'test',
      'test-name': '',
      'test-expires': '2026-01-01',
    })
    expect(res.statusCode).toBe(400)
    expect(res.body).toContain('<h1>Overview</h1>')
    expect(res.body).toContain('<p class="field-error" id="test-name-error">Give the key a name')
    expect(res.body).toContain('<p class="field-error" id="test-expires-error">Choose a date in the future')
    expect(res.body).toContain('value="2026-01-01"')
    expect(await t.storage.db.selectFrom('api_keys').select('id').execute()).toEqual(before)
    const named = await partner.post('/dashboard/partner/keys', { mode: 'test', 'test-name': '   ' })
    expect(named.statusCode).toBe(400)
    expect(await t.storage.db.selectFrom('api_keys').select('id').where('name', '=', 'test key').execute()).toEqual([])
  })

  it('refuses an http:// website, as the form says', async () => {
    const client = new DashboardClient(t.app, '192.0.2.72')
    await client.signUp('http@partner.example')
    await client.useMailedLink(t.storage.db, 'http@partner.example')
    const res = await client.post('/dashboard/partner/application', {
      organisationName: 'Plain HTTP Ltd',
      website: 'http://plain-http.example',
      contactName: 'Pat Plain',
      contactEmail: 'pat@plain-http.example',
      intendedUse: 'Showing learners their next lesson in our reading app.',
    })
    expect(res.statusCode).toBe(400)
    expect(res.body).toContain('Enter the website address, starting with https://')
    expect(res.body).toContain('value="http://plain-http.example"')
    expect(
      await t.storage.db
        .selectFrom('applications')
        .select('id')
        .where('organisation_name', '=', 'Plain HTTP Ltd')
        .execute(),
    ).toEqual([])
  })

  it('shows key times in UTC, saying so', async () => {
    const page = await partner.get('/dashboard/partner')
    const created = new Date(t.clock.now()).toISOString().slice(0, 16).replace('T', ' ')
    expect(page.body).toContain(`<td>${created} UTC</td>`)
  })

  it('asks before suspending an organisation, naming it and what stops; the link alone changes nothing', async () => {
    const status = async () =>
      (await t.storage.db.selectFrom('organisations').select('status').where('id', '=', org).executeTakeFirstOrThrow())
        .status
    const page = await operator.get(orgPage())
    // The organisation page links to the question; no form on it suspends in one click.
    expect(page.body).not.toContain(`action="${orgPage()}/suspend"`)
    expect(page.body).toContain(`href="${orgPage()}/suspend"`)
    const ask = await operator.get(`${orgPage()}/suspend`)
    expect(ask.statusCode).toBe(200)
    expect(ask.body).toContain('<h1>Suspend Gamma Apps?</h1>')
    expect(ask.body).toMatch(/You are about to suspend <strong>Gamma Apps<\/strong> \(\d+ keys? in force\)/)
    expect(ask.body).toContain('gets <strong>403 organisation_suspended</strong> within seconds')
    expect(ask.body).toContain(`<form method="post" action="${orgPage()}/suspend"`)
    expect(ask.body).toMatch(/<input type="hidden" name="_csrf" value="[\w-]+">/)
    expect((await partner.get(`${orgPage()}/suspend`)).statusCode).toBe(403)
    expect(await status()).toBe('active')

    const suspend = await operator.post(`${orgPage()}/suspend`)
    expect(suspend.statusCode).toBe(303)
    expect((await operator.follow(suspend)).body).toContain('The organisation is suspended.')
    expect(await status()).toBe('suspended')
    const audit = await t.storage.db.selectFrom('audit_log').select(['action', 'target']).execute()
    expect(audit).toContainEqual({ action: 'organisation.suspend', target: `organisation:${org}` })
    expect((await operator.get(`${orgPage()}/suspend`)).body).toContain('is suspended already: nothing to do')
    // Reinstating restores and is not destructive: one click, as before.
    expect((await operator.get(orgPage())).body).toContain(`<form method="post" action="${orgPage()}/reinstate">`)
    expect((await operator.post(`${orgPage()}/reinstate`)).statusCode).toBe(303)
    expect(await status()).toBe('active')
  })
})
