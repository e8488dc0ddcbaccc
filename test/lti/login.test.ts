/**
 * OIDC login initiation at /lti/login, on both engines: the platform's browser is redirected to
 * its authorization endpoint with the parameters LTI 1.3 requires, a fresh state and nonce kept
 * server-side (hashed, once, minutes); only an active registration's logins, for our own links.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { claimLogin, LOGIN_MS, loginStateHash } from '../../src/cases/lti-login.js'
import { activateRegistration, recordRegistration } from '../../src/cases/lti-registrations.js'
import { type TestContext, buildTestApp } from '../helper.js'
import { TestPlatform } from '../support/lti-platform.js'
import { OPERATOR } from '../support/lti.js'
import {
  expectPageHeaders,
  expectRefusal,
  LTI_ENV,
  login,
  postForm,
  registeredPlatform,
  TOOL_URL,
} from '../support/lti-launch.js'

describe('LTI login initiation', () => {
  let t: TestContext
  let platform: TestPlatform | undefined
  afterEach(async () => {
    await platform?.stop()
    await t?.close()
  })

  async function setUp(options: { activate?: boolean } = {}) {
    t = await buildTestApp({ env: LTI_ENV })
    platform = await new TestPlatform().start()
    return registeredPlatform(t, platform, t.fixtures.orgs.acme, options)
  }

  const loginUrl = (parameters: Record<string, string>) => `/lti/login?${new URLSearchParams(parameters)}`
  const standard = () => ({
    iss: platform!.issuer,
    client_id: platform!.clientId,
    login_hint: 'hint: 42/ä&x=1',
    lti_message_hint: '{"opaque": "message hint"}',
    target_link_uri: `${TOOL_URL}/lti/launch`,
  })

  it('redirects to the platform with the OIDC parameters, the hints unaltered, and a new state and nonce kept hashed', async () => {
    const registration = await setUp()
    const response = await t.send({ url: loginUrl(standard()) })
    expect(response.statusCode).toBe(302)
    expectPageHeaders(response)
    const location = new URL(String(response.headers.location))
    expect(`${location.origin}${location.pathname}`).toBe(`${platform!.origin}/authorize`)
    const query = Object.fromEntries(location.searchParams)
    expect(query).toMatchObject({
      scope: 'openid',
      response_type: 'id_token',
      response_mode: 'form_post',
      prompt: 'none',
      client_id: platform!.clientId,
      redirect_uri: `${TOOL_URL}/lti/launch`,
      login_hint: 'hint: 42/ä&x=1',
      lti_message_hint: '{"opaque": "message hint"}',
    })
    expect(query.state).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(query.nonce).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const rows = await t.storage.db.selectFrom('lti_login_states').selectAll().execute()
    expect(rows).toEqual([
      {
        state_hash: loginStateHash(query.state!),
        registration_id: registration.id,
        nonce: query.nonce,
        expires_at: new Date(t.clock.now() + LOGIN_MS).toISOString(),
      },
    ])
    expect(JSON.stringify(rows)).not.toContain(query.state)

    // A second login is another state and nonce.
    const again = await login(t, platform!)
    expect(again.state).not.toBe(query.state)
    expect(again.nonce).not.toBe(query.nonce)
  })

  it('takes the login as a form POST too, and the issuer alone when it has one registration', async () => {
    await setUp()
    const { client_id: _, ...withoutClient } = standard()
    const posted = await postForm(t, '/lti/login', withoutClient)
    expect(posted.statusCode).toBe(302)
    expect(new URL(String(posted.headers.location)).searchParams.get('client_id')).toBe(platform!.clientId)
    const got = await t.send({ url: loginUrl(withoutClient) })
    expect(got.statusCode).toBe(302)
  })

  it('asks for the client id when the issuer has several registrations', async () => {
    await setUp()
    const values = platform!.manualValues()
    await recordRegistration(
      t.storage.db,
      {
        organisationId: t.fixtures.orgs.acme,
        schoolId: null,
        linkId: null,
        method: 'manual',
        name: 'Second',
        issuer: values.issuer,
        clientId: 'another-client',
        authLoginUrl: values.authLoginUrl,
        tokenUrl: values.tokenUrl,
        tokenAudience: null,
        jwksUri: values.jwksUri,
        product: null,
        scopes: [],
        deploymentIds: ['d'],
      },
      OPERATOR,
      t.clock,
    )
    const { client_id: _, ...withoutClient } = standard()
    expectRefusal(await t.send({ url: loginUrl(withoutClient) }), 400, 'client_id_needed')
    expect((await t.send({ url: loginUrl(standard()) })).statusCode).toBe(302)
  })

  it('refuses unknown platforms, pending registrations, other tools’ links, unknown deployments and missing parameters', async () => {
    const registration = await setUp({ activate: false })
    expectRefusal(await t.send({ url: loginUrl(standard()) }), 403, 'registration_inactive')
    await activateRegistration(t.storage.db, registration.id, OPERATOR, t.clock)
    expectRefusal(
      await t.send({ url: loginUrl({ ...standard(), iss: 'https://stranger.example' }) }),
      403,
      'unregistered',
    )
    expectRefusal(await t.send({ url: loginUrl({ ...standard(), client_id: 'nope' }) }), 403, 'unregistered')
    for (const target of [
      'https://evil.example/lti/launch',
      `${TOOL_URL}/dashboard`,
      `${TOOL_URL}.evil.example/lti/launch`,
      `https://user@tool.example/lti/launch`,
      'not a url',
    ])
      expectRefusal(await t.send({ url: loginUrl({ ...standard(), target_link_uri: target }) }), 400, 'target_link_uri')
    expectRefusal(
      await t.send({ url: loginUrl({ ...standard(), lti_deployment_id: 'unknown-deployment' }) }),
      403,
      'unknown_deployment',
    )
    expect(
      (await t.send({ url: loginUrl({ ...standard(), lti_deployment_id: platform!.deploymentId }) })).statusCode,
    ).toBe(302)
    const { login_hint: _, ...withoutHint } = standard()
    expectRefusal(await t.send({ url: loginUrl(withoutHint) }), 400, 'malformed')
    expectRefusal(await t.send({ url: `/lti/login?iss=a&iss=b&login_hint=x&target_link_uri=y` }), 400, 'malformed')
    expectRefusal(await t.send({ url: loginUrl({ ...standard(), login_hint: 'x'.repeat(9000) }) }), 400, 'malformed')
    expect(await t.storage.db.selectFrom('lti_login_states').selectAll().execute()).toHaveLength(1)
  })

  it('keeps a state for a few minutes, once: the ended ones are pruned and racing claims have one winner', async () => {
    await setUp()
    const first = await login(t, platform!)
    const racing = await Promise.all([
      claimLogin(t.storage.db, first.state, t.clock),
      claimLogin(t.storage.db, first.state, t.clock),
      claimLogin(t.storage.db, first.state, t.clock),
    ])
    expect(racing.filter((claim) => claim.kind === 'claimed')).toHaveLength(1)
    expect(racing.filter((claim) => claim.kind === 'unknown')).toHaveLength(2)

    const late = await login(t, platform!)
    t.clock.advance(LOGIN_MS + 1)
    expect(await claimLogin(t.storage.db, late.state, t.clock)).toEqual({ kind: 'ended' })
    const ended = await login(t, platform!)
    t.clock.advance(LOGIN_MS + 1)
    // The next login removes the state that ended meanwhile.
    const fresh = await login(t, platform!)
    const hashes = (await t.storage.db.selectFrom('lti_login_states').select('state_hash').execute()).map(
      (row) => row.state_hash,
    )
    expect(hashes).toEqual([loginStateHash(fresh.state)])
    expect(await claimLogin(t.storage.db, ended.state, t.clock)).toEqual({ kind: 'unknown' })
    expect(await claimLogin(t.storage.db, 'not-a-state', t.clock)).toEqual({ kind: 'unknown' })
  })
})
