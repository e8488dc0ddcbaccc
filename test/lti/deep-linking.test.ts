/**
 * Deep Linking 2.0 end to end, on both engines: a teacher's deep-linking request opens the lesson
 * picker; the choice comes back as a page that posts a JWT signed by the tool's key to the
 * platform's return URL, which the test platform verifies against the tool's key set; the link it
 * makes opens the lesson. accept_types and accept_multiple are honoured; learners are refused.
 */
import { decodeProtectedHeader } from 'jose'
import { afterEach, describe, expect, it } from 'vitest'
import { loadToolKey } from '../../src/cases/lti-tool-key.js'
import { deactivateRegistration } from '../../src/cases/lti-registrations.js'
import { CLAIM, LTI_VERSION, MESSAGE, ROLE } from '../../src/domain/lti-claims.js'
import { DEEP_LINKING_MS } from '../../src/domain/lti-deep-linking.js'
import type { LtiRegistrationRow } from '../../src/storage/tables.js'
import { type TestContext, buildTestApp } from '../helper.js'
import type { HttpResponse } from '../support/http-client.js'
import { formOf, TestPlatform } from '../support/lti-platform.js'
import { OPERATOR } from '../support/lti.js'
import {
  expectPageHeaders,
  expectRefusal,
  launchThroughPlatform,
  LTI_ENV,
  playerSessionOf,
  postForm,
  registeredPlatform,
  TOOL_URL,
} from '../support/lti-launch.js'

const LOOPS = 'builder/b2-loops-save-time'
const PATTERNS = 'explorer/e3-patterns-all-around'

describe('LTI deep linking', () => {
  let t: TestContext
  let platform: TestPlatform | undefined
  let registration: LtiRegistrationRow
  afterEach(async () => {
    await platform?.stop()
    await t?.close()
  })

  async function setUp() {
    t = await buildTestApp({ env: LTI_ENV })
    platform = await new TestPlatform().start()
    registration = await registeredPlatform(t, platform, t.fixtures.orgs.acme)
  }

  const request = (settings: Record<string, unknown> = {}, overrides: Record<string, unknown> = {}) => ({
    [CLAIM.messageType]: MESSAGE.deepLinkingRequest,
    [CLAIM.roles]: [ROLE.instructor],
    [CLAIM.resourceLink]: undefined,
    [CLAIM.deepLinkingSettings]: {
      deep_link_return_url: `${platform!.origin}/deep-link-return`,
      accept_types: ['link', 'ltiResourceLink'],
      accept_presentation_document_targets: ['iframe', 'window'],
      accept_multiple: true,
      data: 'opaque-platform-data',
      title: 'Week 3',
      ...settings,
    },
    ...overrides,
  })

  /** The picker's form: its sealed request and the lessons it offers (value -> input type). */
  function picker(response: HttpResponse): { dl: string; lessons: Map<string, string> } {
    expect(response.statusCode, response.body.slice(0, 800)).toBeLessThan(500)
    const form = formOf(response.body)
    expect(form.action).toBe('deep-link')
    const lessons = new Map(
      [...response.body.matchAll(/<input type="(checkbox|radio)" name="lesson" value="([^"]+)"/g)].map((m) => [
        m[2]!,
        m[1]!,
      ]),
    )
    return { dl: form.fields.dl!, lessons }
  }

  it('lets a teacher pick lessons and posts a signed response the platform accepts; the link then opens the lesson', async () => {
    await setUp()
    const opened = await launchThroughPlatform(t, platform!, request())
    expect(opened.statusCode).toBe(200)
    expectPageHeaders(opened)
    expect(opened.body).toContain('Choose lessons to add')
    const { dl, lessons } = picker(opened)
    expect(lessons.size).toBe(30)
    expect(lessons.get(LOOPS)).toBe('checkbox')
    // By tier, with titles, standards and slide counts.
    expect(opened.body).toMatch(/<legend>Explorer \(ages 5-7\)<\/legend>[\s\S]*<legend>Builder/)
    expect(opened.body).toMatch(/Loops Save Time[\s\S]*?\d+ slides · CSTA /)

    const answered = await postForm(t, '/lti/deep-link', { dl, lesson: [LOOPS, PATTERNS] })
    expect(answered.statusCode, answered.body.slice(0, 800)).toBe(200)
    expectPageHeaders(answered)
    const csp = String(answered.headers['content-security-policy'])
    expect(csp).toContain(`form-action 'self' ${platform!.origin}`)
    expect(csp).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'/)
    expect(answered.body).toContain('<button type="submit">Continue</button>')
    const form = formOf(answered.body)
    expect(form.action).toBe(`${platform!.origin}/deep-link-return`)
    const toolKey = await loadToolKey(t.storage.db)
    expect(decodeProtectedHeader(form.fields.JWT!)).toMatchObject({ alg: 'RS256', kid: toolKey.publicJwk.kid })

    const added = await fetch(form.action, { method: 'POST', body: new URLSearchParams(form.fields) })
    expect(added.status, await added.clone().text()).toBe(200)
    const { payload } = platform!.deepLinkResponses[0]!
    expect(payload).toMatchObject({
      iss: platform!.clientId,
      aud: platform!.issuer,
      iat: t.clock.now() / 1000,
      [CLAIM.messageType]: MESSAGE.deepLinkingResponse,
      [CLAIM.version]: LTI_VERSION,
      [CLAIM.deploymentId]: platform!.deploymentId,
      [CLAIM.deepLinkingData]: 'opaque-platform-data',
    })
    expect(typeof payload.nonce).toBe('string')
    expect(payload[CLAIM.contentItems]).toEqual([
      {
        type: 'ltiResourceLink',
        title: 'Loops Save Time',
        url: `${TOOL_URL}/lti/launch`,
        custom: { lesson: LOOPS },
        lineItem: { scoreMaximum: 100, label: 'Loops Save Time', resourceId: LOOPS },
      },
      expect.objectContaining({ type: 'ltiResourceLink', custom: { lesson: PATTERNS } }),
    ])
    // Nothing about the teacher is kept.
    expect(await t.storage.db.selectFrom('lti_students').selectAll().execute()).toEqual([])

    // The platform launches the link it made: the lesson opens.
    const item = (payload[CLAIM.contentItems] as { custom: Record<string, string> }[])[0]!
    const launched = await launchThroughPlatform(t, platform!, {
      [CLAIM.custom]: item.custom,
      [CLAIM.resourceLink]: { id: 'placed-link' },
    })
    expect((await playerSessionOf(t, launched)).lessonSlug).toBe(LOOPS)
  })

  it('offers one lesson when the platform takes one, and says so when more are chosen or none', async () => {
    await setUp()
    const { dl, lessons } = picker(
      await launchThroughPlatform(t, platform!, request({ accept_multiple: false, data: undefined })),
    )
    expect(new Set(lessons.values())).toEqual(new Set(['radio']))
    const two = await postForm(t, '/lti/deep-link', { dl, lesson: [LOOPS, PATTERNS] })
    expect(two.statusCode).toBe(400)
    expect(two.body).toContain('The platform takes one lesson here')
    expect(picker(two).dl).toBe(dl)
    const none = await postForm(t, '/lti/deep-link', { dl })
    expect(none.statusCode).toBe(400)
    expect(none.body).toContain('Choose a lesson to add.')
    const unknown = await postForm(t, '/lti/deep-link', { dl, lesson: 'builder/b99-gone' })
    expect(unknown.statusCode).toBe(400)
    const one = await postForm(t, '/lti/deep-link', { dl, lesson: PATTERNS })
    expect(one.statusCode).toBe(200)
    const form = formOf(one.body)
    expect((await fetch(form.action, { method: 'POST', body: new URLSearchParams(form.fields) })).status).toBe(200)
    const { payload } = platform!.deepLinkResponses[0]!
    expect(payload[CLAIM.contentItems]).toHaveLength(1)
    expect(payload).not.toHaveProperty(CLAIM.deepLinkingData)
  })

  it('refuses learners, places that take no resource links, incomplete settings, ended or altered pickers and deactivated registrations', async () => {
    await setUp()
    expectRefusal(
      await launchThroughPlatform(t, platform!, request({}, { [CLAIM.roles]: [ROLE.learner] })),
      403,
      'deep_linking_role',
    )
    expectRefusal(
      await launchThroughPlatform(t, platform!, request({ accept_types: ['link', 'file'] })),
      400,
      'accept_types',
    )
    expectRefusal(
      await launchThroughPlatform(t, platform!, request({ deep_link_return_url: 'javascript:alert(1)' })),
      400,
      'deep_linking_settings',
    )
    expectRefusal(
      await launchThroughPlatform(t, platform!, request({ deep_link_return_url: 'http://platform.example/return' })),
      400,
      'deep_linking_settings',
    )
    expectRefusal(
      await launchThroughPlatform(t, platform!, request({}, { [CLAIM.deepLinkingSettings]: undefined })),
      400,
      'deep_linking_settings',
    )
    expectRefusal(
      await launchThroughPlatform(t, platform!, request({ data: { not: 'a string' } })),
      400,
      'deep_linking_settings',
    )
    expect(
      (await launchThroughPlatform(t, platform!, request({}, { [CLAIM.roles]: [ROLE.institutionAdministrator] })))
        .statusCode,
    ).toBe(200)

    const { dl } = picker(await launchThroughPlatform(t, platform!, request()))
    // A character inside the sealed value (a last character may carry unused bits, and decode the same).
    const altered = `${dl.slice(0, 10)}${dl[10] === 'A' ? 'B' : 'A'}${dl.slice(11)}`
    expectRefusal(await postForm(t, '/lti/deep-link', { dl: altered, lesson: LOOPS }), 400, 'deep_linking_session')
    expectRefusal(await postForm(t, '/lti/deep-link', { lesson: LOOPS }), 400, 'malformed')
    await deactivateRegistration(t.storage.db, registration.id, OPERATOR, t.clock)
    expectRefusal(await postForm(t, '/lti/deep-link', { dl, lesson: LOOPS }), 403, 'registration_inactive')
    t.clock.advance(DEEP_LINKING_MS)
    expectRefusal(await postForm(t, '/lti/deep-link', { dl, lesson: LOOPS }), 400, 'deep_linking_session')
    expect(platform!.deepLinkResponses).toEqual([])
  })
})
