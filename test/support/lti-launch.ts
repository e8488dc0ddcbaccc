/**
 * Driving launches in the LTI tests: the tool as platforms know it (PUBLIC_URL, a name no test
 * reaches: requests go to the listening app, which need not be where it says it is), a login
 * through /lti/login, the platform's authorization step, and forms posted as a browser posts them.
 */
import { expect } from 'vitest'
import { sharedSecret } from '../../src/cases/shared-settings.js'
import { openPlayerSession, type PlayerSession, playerKey } from '../../src/domain/lti-player-session.js'
import type { Clock } from '../../src/clock.js'
import type { Storage } from '../../src/storage/connection.js'
import type { LtiRegistrationRow } from '../../src/storage/tables.js'
import type { HttpRequest, HttpResponse } from './http-client.js'
import { formOf, type LaunchClaims, type TestPlatform } from './lti-platform.js'
import { registerPlatform } from './lti.js'

/** PUBLIC_URL of the tool in the LTI tests. */
export const TOOL_URL = 'https://tool.example'
export const LTI_ENV = { LTI_ALLOW_LOOPBACK: 'true', PUBLIC_URL: TOOL_URL }

/** What a test needs of its app: a way to send, its storage and clock, where it listens. */
export interface LtiTestApp {
  base: string
  send(request: HttpRequest): Promise<HttpResponse>
  storage: Storage
  clock: Clock
}

export function postForm(t: LtiTestApp, url: string, fields: Record<string, string | string[]>): Promise<HttpResponse> {
  const body = new URLSearchParams()
  for (const [name, value] of Object.entries(fields))
    for (const one of Array.isArray(value) ? value : [value]) body.append(name, one)
  return t.send({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: body.toString(),
  })
}

/** The path and query of an absolute URL, to send it to the listening app. */
export function pathOf(url: string): string {
  const parsed = new URL(url)
  return `${parsed.pathname}${parsed.search}`
}

/** The platform registered by hand with the tool of `t`, active, its tokens dated by the test's clock. */
export async function registeredPlatform(
  t: LtiTestApp,
  platform: TestPlatform,
  organisationId: string,
  options: { activate?: boolean; schoolId?: string | null } = {},
): Promise<LtiRegistrationRow> {
  platform.now = () => t.clock.now()
  return registerPlatform(t.storage, t.clock, platform, { organisationId, toolBase: t.base, ...options })
}

export interface StartedLogin {
  /** The authorization request the tool redirected to. */
  authorize: URL
  state: string
  nonce: string
}

/** A login initiation as the platform sends it (GET), answered by a redirect to the platform. */
export async function login(
  t: LtiTestApp,
  platform: TestPlatform,
  parameters: Record<string, string | undefined> = {},
): Promise<StartedLogin> {
  const query = new URLSearchParams()
  const all: Record<string, string | undefined> = {
    iss: platform.issuer,
    client_id: platform.clientId,
    login_hint: 'opaque-user-hint',
    lti_message_hint: 'opaque-message-hint',
    target_link_uri: `${TOOL_URL}/lti/launch`,
    ...parameters,
  }
  for (const [name, value] of Object.entries(all)) if (value !== undefined) query.set(name, value)
  const response = await t.send({ url: `/lti/login?${query}` })
  expect(response.statusCode, response.body).toBe(302)
  const authorize = new URL(String(response.headers.location))
  return { authorize, state: authorize.searchParams.get('state')!, nonce: authorize.searchParams.get('nonce')! }
}

/** Posts an id_token and state to /lti/launch. */
export function postLaunch(t: LtiTestApp, idToken: string, state: string): Promise<HttpResponse> {
  return postForm(t, '/lti/launch', { id_token: idToken, state })
}

/**
 * A whole launch: the login, the platform's authorization answering with its auto-posting form
 * (claims from `claims`, over a learner's defaults), and that form posted to the tool.
 */
export async function launchThroughPlatform(
  t: LtiTestApp,
  platform: TestPlatform,
  claims: LaunchClaims = {},
  loginParameters: Record<string, string | undefined> = {},
): Promise<HttpResponse> {
  platform.nextLaunch = () => platform.launchClaims(TOOL_URL, claims)
  const started = await login(t, platform, loginParameters)
  const page = await (await fetch(started.authorize)).text()
  const form = formOf(page)
  expect(form.action).toBe(`${TOOL_URL}/lti/launch`)
  return postForm(t, pathOf(form.action), form.fields)
}

/** A launch with a token the test makes itself (after a real login, whose nonce it carries unless told otherwise). */
export async function launchWithToken(
  t: LtiTestApp,
  platform: TestPlatform,
  claims: LaunchClaims,
  options: Parameters<TestPlatform['idToken']>[1] = {},
): Promise<HttpResponse> {
  const started = await login(t, platform)
  const token = await platform.idToken(platform.launchClaims(TOOL_URL, claims), {
    nonce: started.nonce,
    now: t.clock.now(),
    ...options,
  })
  return postLaunch(t, token, started.state)
}

/** The player session a launch's 303 carries. */
export async function playerSessionOf(t: LtiTestApp, response: HttpResponse): Promise<PlayerSession> {
  expect(response.statusCode, response.body).toBe(303)
  const location = String(response.headers.location)
  expect(location).toMatch(/^\/lti\/lesson\?s=/)
  const sealed = new URL(location, 'http://x').searchParams.get('s')!
  const key = playerKey(await sharedSecret(t.storage.db, 'lti-player-key'))
  const session = openPlayerSession(key, sealed, t.clock.now())
  expect(session).toBeDefined()
  return session!
}

/** The reason a refusal page names (`Reason: <code>...</code>`). */
export function reasonOf(response: HttpResponse): string | undefined {
  return /Reason: <code>([^<]*)<\/code>/.exec(response.body)?.[1]
}

/** Expects a refusal page with `status` and `reason`, sent as a page inside a platform is. */
export function expectRefusal(response: HttpResponse, status: number, reason: string): void {
  expect({ status: response.statusCode, reason: reasonOf(response) }, response.body.slice(0, 600)).toEqual({
    status,
    reason,
  })
  expect(response.headers['content-type']).toContain('text/html')
  expectPageHeaders(response)
}

/** The headers of every LTI page: no cookie, no referrer, no cache, framing allowed. */
export function expectPageHeaders(response: HttpResponse): void {
  expect(response.headers['set-cookie']).toBeUndefined()
  expect(response.headers['referrer-policy']).toBe('no-referrer')
  expect(response.headers['cache-control']).toBe('no-store')
  expect(response.headers['x-frame-options']).toBeUndefined()
  expect(response.headers['content-security-policy']).toContain("frame-ancestors 'self' https:")
}
