/**
 * Every check of the LTI security framework at /lti/launch, each refusing on its own, on both
 * engines: the token's algorithm, key and signature, issuer, audience, azp, times, nonce, state,
 * deployment, version, message type, resource link, target link and registration; and what a
 * platform or a user can send that is no launch at all never ends in a 500.
 */
import { SignJWT, UnsecuredJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { activateRegistration, deactivateRegistration } from '../../src/cases/lti-registrations.js'
import { CLAIM, MESSAGE } from '../../src/domain/lti-claims.js'
import type { LtiRegistrationRow } from '../../src/storage/tables.js'
import { type TestContext, buildTestApp, START } from '../helper.js'
import { TestPlatform } from '../support/lti-platform.js'
import { OPERATOR } from '../support/lti.js'
import {
  expectRefusal,
  launchWithToken,
  LTI_ENV,
  login,
  postForm,
  postLaunch,
  registeredPlatform,
  TOOL_URL,
} from '../support/lti-launch.js'

describe('LTI launch security checks', () => {
  let t: TestContext
  let platform: TestPlatform
  let registration: LtiRegistrationRow
  beforeAll(async () => {
    t = await buildTestApp({ env: LTI_ENV })
    platform = await new TestPlatform().start()
    registration = await registeredPlatform(t, platform, t.fixtures.orgs.acme)
  })
  afterAll(async () => {
    await platform?.stop()
    await t?.close()
  })

  const LESSON = { [CLAIM.custom]: { lesson: 'explorer/e1-robots-follow-instructions' } }
  const claims = (overrides: Record<string, unknown> = {}) =>
    platform.launchClaims(TOOL_URL, { ...LESSON, ...overrides })
  const launch = (overrides: Record<string, unknown>, options: Parameters<TestPlatform['idToken']>[1] = {}) =>
    launchWithToken(t, platform, { ...LESSON, ...overrides }, options)
  /** A launch whose token lacks `claim` (which the platform's token maker would otherwise fill in). */
  const launchWithout = async (claim: 'exp' | 'iat') => {
    const started = await login(t, platform)
    const token = await platform.idToken(
      { ...claims(), [claim]: undefined },
      { nonce: started.nonce, now: t.clock.now() },
    )
    return postLaunch(t, token, started.state)
  }

  it('accepts a well-made launch (the baseline every refusal below differs from by one thing)', async () => {
    const response = await launch({})
    expect(response.statusCode, response.body).toBe(303)
    // Platforms send large tokens (Canvas's carry many claims): far over the API's body limit, under the form's.
    const large = await launch({ 'https://platform.example/padding': 'x'.repeat(30_000) })
    expect(large.statusCode, large.body).toBe(303)
  })

  it('refuses an unsigned token (alg none) and one signed with a shared secret (HS256)', async () => {
    let started = await login(t, platform)
    const unsigned = new UnsecuredJWT({
      ...claims(),
      iss: platform.issuer,
      aud: platform.clientId,
      nonce: started.nonce,
      iat: START / 1000,
      exp: START / 1000 + 300,
    }).encode()
    expectRefusal(await postLaunch(t, unsigned, started.state), 401, 'algorithm')
    started = await login(t, platform)
    const secret = new TextEncoder().encode('a shared secret anyone could guess, 32+ bytes long')
    const hs = await new SignJWT({ ...claims(), nonce: started.nonce })
      .setProtectedHeader({ alg: 'HS256', kid: platform.kid })
      .setIssuer(platform.issuer)
      .setAudience(platform.clientId)
      .setIssuedAt(START / 1000)
      .setExpirationTime(START / 1000 + 300)
      .sign(secret)
    expectRefusal(await postLaunch(t, hs, started.state), 401, 'algorithm')
  })

  it('refuses an unknown kid, and a signature by another key under the platform’s kid', async () => {
    expectRefusal(await launch({}, { kid: 'no-such-key' }), 401, 'unknown_kid')
    expectRefusal(await launch({}, { key: platform.strangerKeys }), 401, 'signature')
  })

  it('refuses the wrong issuer, an audience without our client id, and a foreign or missing azp', async () => {
    expectRefusal(await launch({ iss: 'https://stranger.example' }), 401, 'issuer')
    expectRefusal(await launch({ aud: 'another-client' }), 401, 'audience')
    expectRefusal(await launch({ aud: ['another-client', 'third'] }), 401, 'audience')
    // Several audiences: azp must name us.
    expectRefusal(await launch({ aud: [platform.clientId, 'another-client'] }), 401, 'azp')
    expectRefusal(await launch({ aud: [platform.clientId, 'another-client'], azp: 'another-client' }), 401, 'azp')
    expectRefusal(await launch({ azp: 'another-client' }), 401, 'azp')
    const both = await launch({ aud: [platform.clientId, 'another-client'], azp: platform.clientId })
    expect(both.statusCode, both.body).toBe(303)
  })

  it('allows a small clock difference and no more: exp, iat in the future, iat long ago', async () => {
    const now = Math.floor(t.clock.now() / 1000)
    expect((await launch({ exp: now - 30 })).statusCode).toBe(303)
    expectRefusal(await launch({ exp: now - 90 }), 401, 'expired')
    expect((await launch({ iat: now + 30 })).statusCode).toBe(303)
    expectRefusal(await launch({ iat: now + 120 }), 401, 'issued_at')
    expectRefusal(await launch({ iat: now - 3600, exp: now + 3600 }), 401, 'expired')
    expectRefusal(await launchWithout('exp'), 401, 'claims')
    expectRefusal(await launchWithout('iat'), 401, 'claims')
    expectRefusal(await launch({ iat: 'yesterday' }), 401, 'claims')
  })

  it('refuses a replayed nonce, an unknown state and a used one', async () => {
    const first = await login(t, platform)
    const token = await platform.idToken(claims(), { nonce: first.nonce, now: t.clock.now() })
    expect((await postLaunch(t, token, first.state)).statusCode).toBe(303)
    // The same token again: its state is used...
    expectRefusal(await postLaunch(t, token, first.state), 401, 'state')
    // ...and with a new login's state, its nonce is not that login's.
    const second = await login(t, platform)
    expectRefusal(await postLaunch(t, token, second.state), 401, 'nonce')
    expectRefusal(await postLaunch(t, token, 'A'.repeat(43)), 401, 'state')
    expectRefusal(await launch({}, { nonce: undefined }), 401, 'claims')
  })

  it('refuses a state the platform brings back after it ended', async () => {
    const started = await login(t, platform)
    t.clock.advance(6 * 60_000)
    try {
      const token = await platform.idToken(claims(), { nonce: started.nonce, now: t.clock.now() })
      expectRefusal(await postLaunch(t, token, started.state), 401, 'state_ended')
    } finally {
      t.clock.set(START)
    }
  })

  it('of two launches racing with one state, takes one', async () => {
    const started = await login(t, platform)
    const token = await platform.idToken(claims(), { nonce: started.nonce, now: t.clock.now() })
    const answers = await Promise.all([postLaunch(t, token, started.state), postLaunch(t, token, started.state)])
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([303, 401])
  })

  it('refuses an unknown deployment, another LTI version, an unknown message type, a link without its id, another tool’s link', async () => {
    expectRefusal(await launch({ [CLAIM.deploymentId]: 'unknown-deployment' }), 403, 'unknown_deployment')
    expectRefusal(await launch({ [CLAIM.deploymentId]: undefined }), 400, 'deployment_id')
    expectRefusal(await launch({ [CLAIM.version]: '1.1' }), 400, 'version')
    expectRefusal(await launch({ [CLAIM.version]: { toString: 'hostile' } }), 400, 'version')
    expectRefusal(await launch({ [CLAIM.messageType]: 'LtiSubmissionReviewRequest' }), 400, 'message_type')
    expectRefusal(await launch({ [CLAIM.messageType]: MESSAGE.deepLinkingResponse }), 400, 'message_type')
    expectRefusal(await launch({ [CLAIM.resourceLink]: { title: 'no id' } }), 400, 'resource_link')
    expectRefusal(await launch({ [CLAIM.resourceLink]: { id: '' } }), 400, 'resource_link')
    expectRefusal(await launch({ [CLAIM.resourceLink]: 'resource-link-1' }), 400, 'resource_link')
    expectRefusal(await launch({ [CLAIM.targetLinkUri]: 'https://evil.example/lti/launch' }), 400, 'target_link_uri')
    expectRefusal(await launch({ [CLAIM.targetLinkUri]: undefined }), 400, 'target_link_uri')
    expectRefusal(await launch({ sub: { id: 1 } }), 400, 'sub')
    expectRefusal(await launch({ sub: 'x'.repeat(256) }), 400, 'sub')
  })

  it('refuses a launch whose registration was deactivated after its login', async () => {
    const started = await login(t, platform)
    await deactivateRegistration(t.storage.db, registration.id, OPERATOR, t.clock)
    try {
      const token = await platform.idToken(claims(), { nonce: started.nonce, now: t.clock.now() })
      expectRefusal(await postLaunch(t, token, started.state), 403, 'registration_inactive')
    } finally {
      await activateRegistration(t.storage.db, registration.id, OPERATOR, t.clock)
    }
  })

  it('answers whatever else arrives with a page and a 4xx, never a 500', async () => {
    const started = await login(t, platform)
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
    const nested = `${'['.repeat(5000)}${']'.repeat(5000)}`
    const malformed = [
      'not a token',
      'a.b.c',
      '!!!.@@@.###',
      `${b64({ alg: 'RS256', kid: platform.kid })}.not-base64-json.sig`,
      `${Buffer.from(`{"alg":"RS256","x":${nested}}`).toString('base64url')}.${b64({})}.sig`,
      `${b64({ alg: 'RS256', kid: platform.kid, __proto__: { admin: true }, constructor: 1 })}.${b64({ __proto__: 1 })}.c2ln`,
      `${b64(['RS256'])}.${b64({})}.sig`,
      `${b64({ alg: 'RS256', kid: { toString: 'x' } })}.${b64({})}.sig`,
    ]
    for (const token of malformed) {
      const response = await postLaunch(t, token, started.state)
      expect(response.statusCode, token.slice(0, 60)).toBeGreaterThanOrEqual(400)
      expect(response.statusCode, token.slice(0, 60)).toBeLessThan(500)
    }
    // A signed token whose claims are of every wrong shape.
    const hostile = await launch({
      [CLAIM.roles]: { 0: 'Learner' },
      [CLAIM.context]: ['course'],
      [CLAIM.custom]: 'lesson',
      [CLAIM.ags]: { lineitem: 7, scope: 'all' },
      given_name: { toString: 'x' },
    })
    // Nothing usable in them: the link recorded earlier opens, as a preview (no learner role).
    expect(hostile.statusCode).toBe(303)
    expectRefusal(await postForm(t, '/lti/launch', { id_token: 'x'.repeat(70 * 1024), state: 'y' }), 413, 'too_large')
    expectRefusal(await postForm(t, '/lti/launch', { state: started.state }), 400, 'form')
    expectRefusal(await postForm(t, '/lti/launch', {}), 400, 'form')
    expectRefusal(await postForm(t, '/lti/launch', { id_token: ['a', 'b'], state: 'x' }), 400, 'malformed')
    const json = await t.send({ method: 'POST', url: '/lti/launch', payload: { id_token: 5, state: [] } })
    expectRefusal(json, 400, 'malformed')
    const text = await t.send({
      method: 'POST',
      url: '/lti/launch',
      headers: { 'content-type': 'text/plain' },
      payload: 'id_token=x',
    })
    expectRefusal(text, 415, 'media_type')
    expectRefusal(await postForm(t, '/lti/launch', { error: 'login_required' }), 401, 'platform_login_required')
    expectRefusal(await postForm(t, '/lti/launch', { error: '<script>' }), 401, 'platform_unknown')
    expectRefusal(await t.send({ url: '/lti/launch' }), 405, 'method')
    expectRefusal(await t.send({ url: '/lti/nowhere' }), 404, 'not_found')
  })
})
