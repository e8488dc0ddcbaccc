/**
 * Dynamic Registration 1.0 over real sockets against the test platform, on both engines: a
 * platform opening an organisation's registration URL is registered pending, with what the tool
 * posted checked by the platform and here; a duplicate, an issuer on another host, a hostile
 * configuration or a refusal by the platform each get a page that says why, and nothing is stored.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createRegistrationLink, revokeLink } from '../../src/cases/lti-registrations.js'
import { AGS_SCOPE, TOOL_CONFIGURATION, TOOL_SCOPES } from '../../src/domain/lti-claims.js'
import { CANVAS_PRIVACY_LEVEL, registrationRequest } from '../../src/domain/lti-tool-configuration.js'
import { listAudit } from '../../src/storage/audit-repository.js'
import { deploymentsOf, listRegistrations } from '../../src/storage/lti-registration-repository.js'
import { buildTestApp, type TestContext } from '../helper.js'
import { TestPlatform } from '../support/lti-platform.js'
import { OPERATOR } from '../support/lti.js'

const PUBLIC_URL = 'https://curriculum.example.org'

describe('dynamic registration at /lti/register/:token', () => {
  let t: TestContext
  const platforms: TestPlatform[] = []
  afterEach(async () => {
    for (const platform of platforms.splice(0)) await platform.stop()
    await t?.close()
  })

  async function setUp(options: ConstructorParameters<typeof TestPlatform>[0] = {}) {
    t = await buildTestApp({ env: { LTI_ALLOW_LOOPBACK: 'true', PUBLIC_URL } })
    const platform = await new TestPlatform(options).start()
    platforms.push(platform)
    const link = await createRegistrationLink(
      t.storage.db,
      { organisationId: t.fixtures.orgs.acme, schoolId: null },
      OPERATOR,
      t.clock,
    )
    return { platform, link, path: `/lti/register/${link.token}` }
  }

  /** Opens the registration URL as the platform's administrator's browser would. */
  async function open(platform: TestPlatform, path: string) {
    const url = new URL(platform.registrationUrl(`${t.base}${path}`))
    return t.send({ url: `${url.pathname}${url.search}` })
  }

  const stored = () => listRegistrations(t.storage.db)

  it('posts the registration the platform expects, stores it pending, and answers the page that closes the window', async () => {
    const { platform, link, path } = await setUp()
    const response = await open(platform, path)
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toContain('text/html')
    expect(response.body).toContain("{subject:'org.imsglobal.lti.close'}")
    expect(response.body).toContain('window.parent.postMessage(m,"*")')
    expect(response.body).toContain('window.opener.postMessage(m,"*")')
    expect(response.body).toContain('waits for the Curriculum operator')
    expect(response.headers['set-cookie']).toBeUndefined()
    expect(response.headers['referrer-policy']).toBe('no-referrer')
    expect(response.headers['cache-control']).toBe('no-store')
    expect(response.headers['x-frame-options']).toBeUndefined()
    const csp = String(response.headers['content-security-policy'])
    expect(csp).toContain("script-src 'sha256-")
    expect(csp).toContain('frame-ancestors https:')
    expect(csp).not.toContain("'unsafe-inline'")

    // The configuration was asked for with the registration token, as Canvas requires.
    expect(platform.configurationFetches).toHaveLength(1)
    expect(platform.configurationFetches[0]).toMatch(/^Bearer reg-/)
    const [sent] = platform.registrations
    expect(sent!.request).toEqual(registrationRequest(PUBLIC_URL))
    expect(sent!.request).toMatchObject({
      application_type: 'web',
      response_types: ['id_token'],
      grant_types: ['implicit', 'client_credentials'],
      initiate_login_uri: `${PUBLIC_URL}/lti/login`,
      redirect_uris: [`${PUBLIC_URL}/lti/launch`],
      jwks_uri: `${PUBLIC_URL}/lti/jwks`,
      token_endpoint_auth_method: 'private_key_jwt',
    })
    const scopes = String(sent!.request.scope).split(' ')
    expect(scopes.sort()).toEqual([AGS_SCOPE.lineItem, AGS_SCOPE.score].sort())
    expect(String(sent!.request.scope)).not.toContain('nrps')
    const tool = sent!.request[TOOL_CONFIGURATION] as Record<string, unknown>
    expect(tool.domain).toBe('curriculum.example.org')
    expect(tool.target_link_uri).toBe(`${PUBLIC_URL}/lti/launch`)
    expect(tool.claims).toEqual(['iss', 'sub', 'given_name'])
    expect(tool[CANVAS_PRIVACY_LEVEL]).toBe('name_only')
    expect((tool.messages as { type: string }[]).map((m) => m.type)).toEqual([
      'LtiResourceLinkRequest',
      'LtiDeepLinkingRequest',
    ])
    expect((tool.messages as Record<string, unknown>[])[1]).toMatchObject({
      label: expect.any(String),
      placements: ['link_selection', 'assignment_selection'],
    })

    const [row] = await stored()
    expect(row).toMatchObject({
      organisation_id: t.fixtures.orgs.acme,
      link_id: link.row.id,
      method: 'dynamic',
      status: 'pending',
      issuer: platform.issuer,
      client_id: platform.clientId,
      auth_login_url: `${platform.origin}/authorize`,
      token_url: `${platform.origin}/token`,
      jwks_uri: `${platform.origin}/jwks`,
      token_audience: null,
      product: 'test-platform',
      scopes: TOOL_SCOPES.join(' '),
      created_by: `lti:${platform.issuer}`,
      share_id: null,
    })
    expect(await deploymentsOf(t.storage.db, row!.id)).toEqual([platform.deploymentId])
    const audit = await listAudit(t.storage.db)
    expect(audit[0]).toMatchObject({ actor: `lti:${platform.issuer}`, action: 'lti.register' })
  })

  it('refuses a second registration of the same client id with a 409 page, keeping the first', async () => {
    const { platform, path } = await setUp()
    expect((await open(platform, path)).statusCode).toBe(200)
    const again = await open(platform, path)
    expect(again.statusCode).toBe(409)
    expect(again.body).toContain('Registered already')
    expect(again.body).toContain(`already has a registration with client id ${platform.clientId}`)
    expect(again.body).not.toContain('org.imsglobal.lti.close')
    expect(await stored()).toHaveLength(1)
  })

  it('refuses an issuer that is not on the configuration’s host, without posting anything', async () => {
    const { platform, path } = await setUp({ issuer: 'https://canvas.instructure.com' })
    const response = await open(platform, path)
    expect(response.statusCode).toBe(502)
    expect(response.body).toContain(
      `its issuer https://canvas.instructure.com is not on ${new URL(platform.origin).host}`,
    )
    expect(platform.registrations).toEqual([])
    expect(await stored()).toEqual([])
  })

  it('accepts endpoints on another host than the issuer’s, and keeps them as the platform named them', async () => {
    const { platform, path } = await setUp({ endpointHost: 'localhost' })
    expect((await open(platform, path)).statusCode).toBe(200)
    const [row] = await stored()
    expect(row!.issuer).toBe(platform.origin)
    expect(row!.auth_login_url).toBe(`${platform.endpointOrigin}/authorize`)
    expect(row!.auth_login_url).toMatch(/^http:\/\/localhost:\d+\/authorize$/)
    expect(row!.jwks_uri).toMatch(/^http:\/\/localhost:\d+\/jwks$/)
  })

  it('keeps what a Canvas-like answer says: no deployment yet, the authorization server, the scopes granted', async () => {
    const { platform, path } = await setUp({ product: 'canvas' })
    platform.answerConfiguration = (configuration) => ({
      status: 200,
      body: { ...configuration, authorization_server: 'canvas.instructure.com' },
    })
    platform.answerRegistration = (_request, answer) => ({
      status: 200,
      body: { ...answer, scope: AGS_SCOPE.score, [TOOL_CONFIGURATION]: {} },
    })
    const response = await open(platform, path)
    expect(response.statusCode).toBe(200)
    const [row] = await stored()
    expect(row).toMatchObject({ token_audience: 'canvas.instructure.com', product: 'canvas', scopes: AGS_SCOPE.score })
    expect(row!.name).toBe(`canvas at ${new URL(platform.origin).host}`)
    expect(await deploymentsOf(t.storage.db, row!.id)).toEqual([])
  })

  it('refuses hostile configurations with a page that says why, posting and storing nothing', async () => {
    const { platform, path } = await setUp()
    const cases: [string, (c: Record<string, unknown>) => { status: number; body: unknown }, string][] = [
      ['not JSON', () => ({ status: 200, body: '<html>hello</html>', contentType: 'text/html' }), 'not JSON'],
      ['a JSON array', () => ({ status: 200, body: '[1, 2]' }), 'not a JSON object'],
      ['too large', (c) => ({ status: 200, body: { ...c, padding: 'x'.repeat(300_000) } }), 'too_large'],
      ['a 500', () => ({ status: 500, body: { error: 'server_error' } }), 'answered 500 (server_error)'],
      ['no token endpoint', (c) => ({ status: 200, body: { ...c, token_endpoint: undefined } }), 'no token_endpoint'],
      [
        'a plain http endpoint',
        (c) => ({ status: 200, body: { ...c, jwks_uri: 'http://platform.example.org/jwks' } }),
        'must start with https://',
      ],
      [
        'a private-address endpoint',
        (c) => ({ status: 200, body: { ...c, token_endpoint: 'https://10.1.2.3/token' } }),
        'not a private, loopback or link-local address',
      ],
      [
        'a metadata-address registration endpoint',
        (c) => ({ status: 200, body: { ...c, registration_endpoint: 'https://169.254.169.254/register' } }),
        'not a private, loopback or link-local address',
      ],
      [
        'no private_key_jwt',
        (c) => ({ status: 200, body: { ...c, token_endpoint_auth_methods_supported: ['client_secret_basic'] } }),
        'private_key_jwt',
      ],
      ['no issuer', (c) => ({ status: 200, body: { ...c, issuer: 42.5 } }), 'names no issuer'],
    ]
    for (const [what, answer, says] of cases) {
      platform.answerConfiguration = answer
      const response = await open(platform, path)
      expect(response.statusCode, what).toBe(502)
      expect(response.headers['content-type'], what).toContain('text/html')
      expect(response.body, what).toContain('The platform’s configuration could not be used')
      expect(response.body, what).toContain(says.replace(/'/g, '&#39;'))
      expect(response.body, what).not.toContain('org.imsglobal.lti.close')
    }
    expect(platform.registrations).toEqual([])
    expect(await stored()).toEqual([])
  })

  it('reports the platform refusing the registration, or answering without a client id, storing nothing', async () => {
    const { platform, path } = await setUp()
    platform.answerRegistration = () => ({
      status: 400,
      body: { error: 'invalid_client_metadata', error_description: 'the <b>scope</b> is not allowed' },
    })
    const refused = await open(platform, path)
    expect(refused.statusCode).toBe(502)
    expect(refused.body).toContain('The platform did not take the registration')
    expect(refused.body).toContain('refused it with 400 (invalid_client_metadata: the &lt;b&gt;scope&lt;/b&gt;')
    platform.answerRegistration = (_request, answer) => ({ status: 201, body: { ...answer, client_id: '' } })
    const nameless = await open(platform, path)
    expect(nameless.statusCode).toBe(502)
    expect(nameless.body).toContain('without a client id')
    expect(await stored()).toEqual([])
  })

  it('answers 404 for an unknown or revoked URL and 400 without a usable configuration address, storing nothing', async () => {
    const { platform, link, path } = await setUp()
    const unknown = await open(platform, `/lti/register/${'A'.repeat(43)}`)
    expect(unknown.statusCode).toBe(404)
    expect(unknown.body).toContain('unknown or revoked')
    expect((await t.send({ url: '/lti/register/..%2F..%2Fetc' })).statusCode).toBe(404)

    const head = await t.send({
      method: 'HEAD',
      url: new URL(platform.registrationUrl(`${t.base}${path}`)).search.replace(/^/, path),
    })
    expect(head.statusCode).toBe(404)
    const bare = await t.send({ url: path })
    expect(bare.statusCode).toBe(400)
    expect(bare.body).toContain('Open this address from your learning platform')
    const internal = await t.send({
      url: `${path}?openid_configuration=${encodeURIComponent('https://192.168.1.1/config')}&registration_token=x`,
    })
    expect(internal.statusCode).toBe(400)
    expect(internal.body).toContain('configuration address is refused')

    await revokeLink(t.storage.db, link.row.id, OPERATOR, t.clock)
    expect((await open(platform, path)).statusCode).toBe(404)
    expect(platform.configurationFetches).toEqual([])
    expect(await stored()).toEqual([])
  })

  it('serves its configuration as JSON for platforms that paste one, and as Canvas’s developer-key JSON', async () => {
    t = await buildTestApp({ env: { PUBLIC_URL: `${PUBLIC_URL}/` } })
    const response = await t.send({ url: '/lti/configuration.json' })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toContain('application/json')
    expect(response.json()).toEqual(registrationRequest(PUBLIC_URL))
    expect(JSON.stringify(response.json())).not.toContain('curriculum.example.org//')

    const canvas = await t.send({ url: '/lti/configuration/canvas.json' })
    expect(canvas.statusCode).toBe(200)
    expect(canvas.json()).toMatchObject({
      oidc_initiation_url: `${PUBLIC_URL}/lti/login`,
      target_link_uri: `${PUBLIC_URL}/lti/launch`,
      public_jwk_url: `${PUBLIC_URL}/lti/jwks`,
      scopes: [...TOOL_SCOPES],
      extensions: [
        {
          platform: 'canvas.instructure.com',
          privacy_level: 'name_only',
          domain: 'curriculum.example.org',
        },
      ],
    })
  })
})
