/**
 * The operator's LTI pages over a real socket: a registration URL made for an organisation, shown
 * once, through which the test platform registers itself pending; activation (racing activations:
 * one wins, the other is told), deactivation after a confirmation page, deployments added and
 * removed, the URL revoked, a platform registered by hand (every bad field told), the tool key
 * rotated with the old key still published. Every change is audited under the operator's account;
 * a partner gets none of it, an owner sees their own organisation's registrations read only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { recordRegistration, registrationTokenHash } from '../../src/cases/lti-registrations.js'
import { createSchool } from '../../src/cases/schools.js'
import { TOOL_SCOPES } from '../../src/domain/lti-claims.js'
import { deploymentsOf, listRegistrations, registrationById } from '../../src/storage/lti-registration-repository.js'
import { buildTestApp } from '../helper.js'
import { perSuite } from '../support/built.js'
import { TestPlatform } from '../support/lti-platform.js'
import { DashboardClient, makeOwner, signedInOperator } from './dashboard-client.js'

const LTI = '/dashboard/operator/lti'
const PUBLIC_URL = 'https://curriculum.example.org'

describe("the operator's LTI pages", () => {
  const t = perSuite(() => buildTestApp({ env: { LTI_ALLOW_LOOPBACK: 'true', PUBLIC_URL } }))
  let operator: DashboardClient
  let owner: DashboardClient
  let developer: DashboardClient
  let platform: TestPlatform
  let schoolId: string

  beforeAll(async () => {
    operator = await signedInOperator(t, '192.0.2.70', (request) => t.send(request))
    owner = new DashboardClient(t.app, '192.0.2.71', (request) => t.send(request))
    developer = new DashboardClient(t.app, '192.0.2.72', (request) => t.send(request))
    expect((await owner.signUp('owner@acme.example')).statusCode).toBe(200)
    expect((await developer.signUp('dev@acme.example')).statusCode).toBe(200)
    await makeOwner(t.storage.db, 'owner@acme.example', t.fixtures.orgs.acme)
    await makeOwner(t.storage.db, 'dev@acme.example', t.fixtures.orgs.acme)
    await t.storage.db
      .updateTable('memberships')
      .set({ role: 'developer' })
      .where(
        'account_id',
        '=',
        t.storage.db.selectFrom('accounts').select('id').where('email', '=', 'dev@acme.example'),
      )
      .execute()
    schoolId = (
      await createSchool(t.storage.db, { name: 'Hillside Primary', identifier: null }, t.clock.now(), { actor: 'test' })
    ).id
    platform = await new TestPlatform({ product: 'moodle' }).start()
  })
  afterAll(async () => {
    await platform?.stop()
  })

  const audit = (action: string) =>
    t.storage.db.selectFrom('audit_log').selectAll().where('action', '=', action).orderBy('id').execute()

  /** Makes a registration URL on the LTI page: the URL the page shows once. */
  async function newRegistrationUrl(organisation: string, school = ''): Promise<string> {
    const made = await operator.post(`${LTI}/links`, { organisation, school })
    expect(made.statusCode).toBe(200)
    const url = /id="registration-url" class="secret" readonly value="([^"]+)"/.exec(made.body)?.[1]
    expect(url).toMatch(new RegExp(`^${PUBLIC_URL}/lti/register/[A-Za-z0-9_-]{43}$`))
    return url!
  }

  /** The platform's administrator opens the registration URL (on this test's tool). */
  async function registerThrough(url: string) {
    const opened = new URL(platform.registrationUrl(url.replace(PUBLIC_URL, t.base)))
    return t.send({ url: `${opened.pathname}${opened.search}` })
  }

  it('shows the page with the tool’s values and key, and makes a registration URL shown once, audited', async () => {
    const page = await operator.get(LTI)
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain('No learning platform is registered.')
    expect(page.body).toContain(`${PUBLIC_URL}/lti/login`)
    expect(page.body).toContain(`${PUBLIC_URL}/lti/configuration/canvas.json`)
    expect(page.body).toContain('aria-current="page"')

    const url = await newRegistrationUrl(t.fixtures.orgs.acme, schoolId)
    const token = url.split('/').pop()!
    const links = await t.storage.db.selectFrom('lti_registration_links').selectAll().execute()
    expect(links).toHaveLength(1)
    expect(links[0]).toMatchObject({ organisation_id: t.fixtures.orgs.acme, school_id: schoolId })
    expect(JSON.stringify(links)).not.toContain(token)
    const after = await operator.get(LTI)
    expect(after.body).not.toContain(token)
    expect(after.body).toContain('Hillside Primary')
    const [entry] = await audit('lti.link.create')
    expect(entry).toMatchObject({ actor: 'account:ops@example.org', target: `lti-link:${links[0]!.id}` })

    const refused = await operator.post(`${LTI}/links`, { organisation: t.fixtures.orgs.acme, school: 'no-school' })
    expect(refused.statusCode).toBe(400)
    expect(refused.body).toContain('Choose a partner organisation')
    expect(await t.storage.db.selectFrom('lti_registration_links').selectAll().execute()).toHaveLength(1)
  })

  it('lists what registers through the URL as pending, and activates it once under racing activations', async () => {
    const url = await newRegistrationUrl(t.fixtures.orgs.acme, schoolId)
    expect((await registerThrough(url)).statusCode).toBe(200)
    const [registration] = await listRegistrations(t.storage.db)
    expect(registration).toMatchObject({ status: 'pending', school_id: schoolId, product: 'moodle' })
    const list = await operator.get(LTI)
    expect(list.body).toContain(`href="${LTI}/registrations/${registration!.id}"`)
    expect(list.body).toContain('<span class="state pending">pending</span>')
    const page = await operator.get(`${LTI}/registrations/${registration!.id}`)
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain(platform.clientId)
    expect(page.body).toContain(platform.deploymentId)
    expect(page.body).toContain('students attend Hillside Primary')
    expect(page.body).toContain(`Activate ${registration!.name}`)
    // Its scores section: none yet, each state linked to the scores page.
    expect(page.body).toContain('<h2>Scores for the gradebook</h2>')
    expect(page.body).toContain('<a href="/dashboard/operator/lti/scores?state=failed">failed</a>: 0')

    const [first, second] = await Promise.all([
      operator.post(`${LTI}/registrations/${registration!.id}/activate`),
      operator.post(`${LTI}/registrations/${registration!.id}/activate`),
    ])
    expect([first!.statusCode, second!.statusCode].sort()).toEqual([303, 409])
    const lost = first!.statusCode === 409 ? first! : second!
    expect(lost.body).toMatch(/is active already|changed meanwhile/)
    expect((await registrationById(t.storage.db, registration!.id))!.status).toBe('active')
    const activations = await audit('lti.activate')
    expect(activations).toHaveLength(1)
    expect(activations[0]).toMatchObject({ actor: 'account:ops@example.org' })
    const active = await operator.get(`${LTI}/registrations/${registration!.id}?notice=activated`)
    expect(active.body).toContain('The registration is active')
    expect(active.body).toContain('<span class="state active">active</span>')
  })

  it('deactivates after a confirmation page, and adds and removes deployments, each audited', async () => {
    const [registration] = await listRegistrations(t.storage.db, 'active')
    const base = `${LTI}/registrations/${registration!.id}`
    const confirm = await operator.get(`${base}/deactivate`)
    expect(confirm.statusCode).toBe(200)
    expect(confirm.body).toContain(`Deactivate ${registration!.name}?`)
    expect(confirm.body).toContain('Every launch from it is refused')
    expect((await registrationById(t.storage.db, registration!.id))!.status).toBe('active')
    const deactivated = await operator.post(`${base}/deactivate`)
    expect(deactivated.statusCode).toBe(303)
    expect(deactivated.headers.location).toBe(`${base}?notice=deactivated`)
    expect((await registrationById(t.storage.db, registration!.id))!.status).toBe('inactive')
    expect(await audit('lti.deactivate')).toHaveLength(1)

    const bad = await operator.post(`${base}/deployments`, { deployment: 'has space' })
    expect(bad.statusCode).toBe(400)
    expect(bad.body).toContain('aria-invalid="true"')
    expect(bad.body).toContain('1 to 255 ASCII characters')
    expect((await operator.post(`${base}/deployments`, { deployment: 'canvas-42:abc' })).statusCode).toBe(303)
    expect((await deploymentsOf(t.storage.db, registration!.id)).sort()).toEqual(
      [platform.deploymentId, 'canvas-42:abc'].sort(),
    )
    const removed = await operator.post(`${base}/deployments/remove`, { deployment: platform.deploymentId })
    expect(removed.statusCode).toBe(303)
    expect(await deploymentsOf(t.storage.db, registration!.id)).toEqual(['canvas-42:abc'])
    expect((await operator.post(`${base}/deployments/remove`, { deployment: 'nope' })).statusCode).toBe(404)
    expect((await audit('lti.deployment.add')).map((row) => JSON.parse(row.detail))).toEqual([
      { deploymentId: 'canvas-42:abc' },
    ])
    expect(await audit('lti.deployment.remove')).toHaveLength(1)
    expect((await operator.get(`${LTI}/registrations/not-an-id`)).statusCode).toBe(404)
  })

  it('revokes a registration URL: the platform opening it then gets 404', async () => {
    const url = await newRegistrationUrl(t.fixtures.orgs.acme)
    const { id: newest } = await t.storage.db
      .selectFrom('lti_registration_links')
      .select('id')
      .where('token_hash', '=', registrationTokenHash(url.split('/').pop()!))
      .executeTakeFirstOrThrow()
    const revoked = await operator.post(`${LTI}/links/${newest}/revoke`)
    expect(revoked.statusCode).toBe(303)
    expect((await operator.follow(revoked)).body).toContain('The registration URL is revoked')
    expect((await registerThrough(url)).statusCode).toBe(404)
    expect(await audit('lti.link.revoke')).toHaveLength(1)
    expect((await operator.post(`${LTI}/links/${newest}/revoke`)).statusCode).toBe(404)
  })

  it('registers a platform by hand, telling every bad field, and refuses a client id registered already', async () => {
    const form = await operator.get(`${LTI}/registrations/new`)
    expect(form.statusCode).toBe(200)
    const values = {
      name: 'Hillside Moodle',
      organisation: t.fixtures.orgs.beta,
      school: '',
      issuer: 'https://moodle.hillside.example',
      clientId: 'Zq8a1',
      deploymentIds: '1\n2',
      authLoginUrl: 'https://moodle.hillside.example/mod/lti/auth.php',
      tokenUrl: 'https://moodle.hillside.example/mod/lti/token.php',
      tokenAudience: '',
      jwksUri: 'https://moodle.hillside.example/mod/lti/certs.php',
    }
    const refused = await operator.post(`${LTI}/registrations`, {
      ...values,
      organisation: 'nobody',
      issuer: 'http://moodle.hillside.example',
      deploymentIds: '',
      tokenUrl: 'https://10.0.0.7/token.php',
      jwksUri: '',
    })
    expect(refused.statusCode).toBe(400)
    for (const message of [
      'Choose the organisation that will own the students.',
      'The issuer: The URL must start with https://.',
      'Enter at least one deployment id.',
      'The access token URL: The URL must name a public host',
      'Enter the platform’s key set URL.',
    ])
      expect(refused.body).toContain(message)
    expect(refused.body).toContain('value="Hillside Moodle"')
    expect(await listRegistrations(t.storage.db)).toHaveLength(1)

    const made = await operator.post(`${LTI}/registrations`, values)
    expect(made.statusCode).toBe(303)
    const id = /registrations\/([0-9a-f-]{36})\?notice=registered$/.exec(made.headers.location ?? '')?.[1]
    const row = (await registrationById(t.storage.db, id!))!
    expect(row).toMatchObject({
      method: 'manual',
      status: 'pending',
      organisation_id: t.fixtures.orgs.beta,
      issuer: values.issuer,
      client_id: 'Zq8a1',
      scopes: TOOL_SCOPES.join(' '),
      created_by: 'account:ops@example.org',
    })
    expect(await deploymentsOf(t.storage.db, id!)).toEqual(['1', '2'])
    expect((await operator.follow(made)).body).toContain('The platform is registered, pending')

    const again = await operator.post(`${LTI}/registrations`, values)
    expect(again.statusCode).toBe(409)
    expect(again.body).toContain('already has a registration with client id Zq8a1')
    expect(await listRegistrations(t.storage.db)).toHaveLength(2)
  })

  it('rotates the tool key after asking; the retired key stays published beside the new one', async () => {
    const before = (await t.send({ url: '/lti/jwks' })).json() as { keys: { kid: string }[] }
    const confirm = await operator.get(`${LTI}/key/rotate`)
    expect(confirm.statusCode).toBe(200)
    expect(confirm.body).toContain(before.keys[0]!.kid)
    const rotated = await operator.post(`${LTI}/key/rotate`)
    expect(rotated.statusCode).toBe(303)
    const [entry] = await audit('lti.key.rotate')
    expect(entry).toMatchObject({ actor: 'account:ops@example.org', target: 'lti-tool-key' })
    const { current, retired } = JSON.parse(entry!.detail) as { current: string; retired: string }
    expect(retired).toBe(before.keys[0]!.kid)
    // Each instance reads the key again within a minute.
    t.clock.advance(61_000)
    const after = (await t.send({ url: '/lti/jwks' })).json() as { keys: { kid: string }[] }
    expect(after.keys.map((key) => key.kid)).toEqual([current, retired])
    const page = await operator.get(LTI)
    expect(page.body).toContain(`In use: <code>${current}</code>`)
    expect(page.body).toContain(`<code>${retired}</code>`)
  })

  it('refuses every LTI action to a partner and to a form without its token, changing nothing', async () => {
    const [registration] = await listRegistrations(t.storage.db)
    const before = await t.storage.db.selectFrom('lti_registrations').selectAll().orderBy('id').execute()
    for (const client of [owner, developer]) {
      expect((await client.get(LTI)).statusCode).toBe(403)
      expect((await client.post(`${LTI}/registrations/${registration!.id}/activate`)).statusCode).toBe(403)
      expect((await client.post(`${LTI}/key/rotate`)).statusCode).toBe(403)
      expect((await client.post(`${LTI}/links`, { organisation: t.fixtures.orgs.acme })).statusCode).toBe(403)
    }
    const tokenless = await operator.post(`${LTI}/registrations/${registration!.id}/deactivate`, { _csrf: null })
    expect(tokenless.statusCode).toBe(403)
    const foreign = await operator.post(`${LTI}/key/rotate`, {}, { origin: 'https://evil.example' })
    expect(foreign.statusCode).toBe(403)
    expect(await t.storage.db.selectFrom('lti_registrations').selectAll().orderBy('id').execute()).toEqual(before)
    expect(await audit('lti.key.rotate')).toHaveLength(1)
  })

  it('shows an owner their own organisation’s registrations, read only, and nothing to a developer', async () => {
    await recordRegistration(
      t.storage.db,
      {
        organisationId: t.fixtures.orgs.beta,
        schoolId: null,
        linkId: null,
        method: 'manual',
        name: 'Beta Schoology',
        issuer: 'https://schoology.schoology.com',
        clientId: 'beta-1',
        authLoginUrl: 'https://lti-service.svc.schoology.com/lti-service/authorize-redirect',
        tokenUrl: 'https://lti-service.svc.schoology.com/lti-service/access-token',
        tokenAudience: null,
        jwksUri: 'https://lti-service.svc.schoology.com/lti-service/.well-known/jwks',
        product: null,
        scopes: TOOL_SCOPES,
        deploymentIds: ['d-1'],
      },
      { actor: 'account:ops@example.org' },
      t.clock,
    )
    const page = await owner.get('/dashboard/partner/lti')
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain(platform.clientId)
    expect(page.body).not.toContain('Beta Schoology')
    expect(page.body).not.toContain('Hillside Moodle')
    expect(page.body).not.toContain('<form method="post" action="/dashboard/operator')
    expect(page.body).not.toContain(`${LTI}/registrations/`)
    const refused = await developer.get('/dashboard/partner/lti')
    expect(refused.statusCode).toBe(403)
    expect(refused.body).toContain('Ask one of its owners')
  })
})
