/**
 * What the tool keeps of a verified id_token (LTI 1.3 Core, Deep Linking 2.0, AGS 2.0), and the
 * message-level checks of the LTI security framework that a signature check does not make.
 *
 * Privacy at the edge: `readLaunch` copies out the few claims the tool uses (the user's `sub`
 * and first name, roles reduced to three, context and resource link ids, the deployment, the AGS
 * endpoint's URLs and scopes, the deep-linking settings, and `custom.lesson`). Everything else a
 * platform sends (family, middle and full names, e-mail, picture, `lis`, other custom values,
 * titles, the raw token) is never copied, so it cannot reach a table or a log line.
 */
import { AGS_SCOPE, CLAIM, LTI_VERSION, MESSAGE } from './lti-claims.js'
import { ltiFirstName } from './lti-first-name.js'
import type { LtiRole } from './lti-player-session.js'
import { LtiRefusal } from './lti-refusal.js'
import { reducedRoles } from './lti-roles.js'
import { SLUG } from './slug.js'

export type LaunchMessage = typeof MESSAGE.resourceLink | typeof MESSAGE.deepLinkingRequest

export interface AgsEndpoint {
  lineItem: string | null
  lineItems: string | null
  scope: string[]
}

export interface DeepLinkingSettings {
  returnUrl: string
  acceptTypes: string[]
  acceptMultiple: boolean
  /** Opaque; echoed in the response. */
  data: string | null
}

export interface LaunchFacts {
  messageType: LaunchMessage
  deploymentId: string
  /** The platform's stable id of its user; null for an anonymous launch. */
  sub: string | null
  /** `given_name` under the first-name rule (or "Student-Xxxx"); null without `sub`. */
  firstName: string | null
  roles: LtiRole[]
  contextId: string | null
  resourceLinkId: string | null
  /** `custom.lesson`: the slug the tool put into the link at deep linking. */
  lesson: string | null
  ags: AgsEndpoint | null
  deepLinking: DeepLinkingSettings | null
}

export interface LaunchExpectations {
  clientId: string
  /** The nonce kept with the login's state. */
  nonce: string
  /** The tool's public URL (PUBLIC_URL): its links are under `<toolUrl>/lti/`. */
  toolUrl: string
  /** Development only: plain-http platform URLs on this machine are accepted. */
  allowHttp: boolean
}

const ID = 255
const URL_LENGTH = 2048
const DATA_LENGTH = 8192
const KNOWN_AGS_SCOPES = new Set<string>(Object.values(AGS_SCOPE))

function record(value: unknown): Readonly<Record<string, unknown>> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined
}

function id(value: unknown): string | null {
  return typeof value === 'string' && value.length > 0 && value.length <= ID ? value : null
}

/** A host name of this machine: what LTI_ALLOW_LOOPBACK lets a platform use over plain http. */
export function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname)
}

/**
 * A platform's URL as the tool accepts it: absolute https, or (`allowLoopback`, development only)
 * plain http to this machine.
 */
export function webUrl(value: unknown, allowLoopback: boolean): string | null {
  if (typeof value !== 'string' || value.length > URL_LENGTH) return null
  try {
    const url = new URL(value)
    if (url.protocol === 'https:' || (allowLoopback && url.protocol === 'http:' && isLoopbackHost(url.hostname)))
      return value
  } catch {}
  return null
}

/** Whether `candidate` is one of the tool's LTI URLs: same origin as `toolUrl`, under its /lti/. */
export function isToolUrl(toolUrl: string, candidate: unknown): boolean {
  if (typeof candidate !== 'string' || candidate.length > URL_LENGTH) return false
  try {
    const base = new URL(`${toolUrl}/lti/`)
    const url = new URL(candidate)
    return url.origin === base.origin && url.username === '' && url.pathname.startsWith(base.pathname)
  } catch {
    return false
  }
}

const refuse = (status: 400 | 401 | 403, reason: string, title: string, detail: string) =>
  new LtiRefusal(status, reason, title, detail)

/** Checks the claims the signature check leaves to the tool and keeps what the tool uses; throws LtiRefusal. */
export function readLaunch(claims: Readonly<Record<string, unknown>>, expected: LaunchExpectations): LaunchFacts {
  if (claims.nonce !== expected.nonce)
    throw refuse(
      401,
      'nonce',
      'This launch was used already',
      'The id_token does not carry the nonce of this login: it belongs to another, earlier launch. Start the launch ' +
        'again from the course.',
    )
  const aud = claims.aud
  const azp = claims.azp
  if ((Array.isArray(aud) && aud.length > 1 && azp === undefined) || (azp !== undefined && azp !== expected.clientId))
    throw refuse(
      401,
      'azp',
      'The launch is meant for another tool',
      `The id_token's authorized party (azp) is not this tool's client id ${expected.clientId}. Check the client id ` +
        `of the registration in the dashboard.`,
    )
  const version = claims[CLAIM.version]
  if (version !== LTI_VERSION)
    throw refuse(
      400,
      'version',
      'Unsupported LTI version',
      `The launch says LTI version ${typeof version === 'string' ? version.slice(0, 20) : '(none)'}; this tool ` +
        `speaks LTI ${LTI_VERSION} only.`,
    )
  const messageType = claims[CLAIM.messageType]
  if (messageType !== MESSAGE.resourceLink && messageType !== MESSAGE.deepLinkingRequest)
    throw refuse(
      400,
      'message_type',
      'Unsupported kind of launch',
      `This tool answers ${MESSAGE.resourceLink} and ${MESSAGE.deepLinkingRequest} messages; the platform sent ` +
        `another kind.`,
    )
  const deploymentId = id(claims[CLAIM.deploymentId])
  if (deploymentId === null)
    throw refuse(400, 'deployment_id', 'The launch names no deployment', 'The id_token carries no deployment id.')
  const target = claims[CLAIM.targetLinkUri]
  if ((messageType === MESSAGE.resourceLink || target !== undefined) && !isToolUrl(expected.toolUrl, target))
    throw refuse(
      400,
      'target_link_uri',
      'The link points at another tool',
      `The launch is for an address outside this tool (${expected.toolUrl}/lti/). Place the lesson again with the ` +
        `tool's deep linking, or correct the link's URL in the platform.`,
    )
  const rawSub = claims.sub
  const sub = rawSub === undefined ? null : id(rawSub)
  if (rawSub !== undefined && sub === null)
    throw refuse(400, 'sub', 'The user id is malformed', 'The id_token\'s "sub" must be 1 to 255 characters.')
  const resourceLink = record(claims[CLAIM.resourceLink])
  const resourceLinkId = id(resourceLink?.id)
  if (messageType === MESSAGE.resourceLink && resourceLinkId === null)
    throw refuse(
      400,
      'resource_link',
      'The launch names no resource link',
      'A resource link launch must carry the resource link claim with its id (1 to 255 characters).',
    )
  const lesson = record(claims[CLAIM.custom])?.lesson
  return {
    messageType,
    deploymentId,
    sub,
    firstName: sub === null ? null : ltiFirstName(claims.given_name, sub),
    roles: reducedRoles(claims[CLAIM.roles]),
    contextId: id(record(claims[CLAIM.context])?.id),
    resourceLinkId: messageType === MESSAGE.resourceLink ? resourceLinkId : null,
    lesson: typeof lesson === 'string' && SLUG.test(lesson) ? lesson : null,
    ags: agsEndpoint(claims[CLAIM.ags], expected.allowHttp),
    deepLinking: messageType === MESSAGE.deepLinkingRequest ? deepLinkingSettings(claims, expected.allowHttp) : null,
  }
}

function agsEndpoint(claim: unknown, allowHttp: boolean): AgsEndpoint | null {
  const endpoint = record(claim)
  if (endpoint === undefined) return null
  const scope = Array.isArray(endpoint.scope)
    ? [...new Set(endpoint.scope.filter((s): s is string => typeof s === 'string' && KNOWN_AGS_SCOPES.has(s)))]
    : []
  return {
    lineItem: webUrl(endpoint.lineitem, allowHttp),
    lineItems: webUrl(endpoint.lineitems, allowHttp),
    scope,
  }
}

function deepLinkingSettings(claims: Readonly<Record<string, unknown>>, allowHttp: boolean): DeepLinkingSettings {
  const settings = record(claims[CLAIM.deepLinkingSettings])
  const returnUrl = webUrl(settings?.deep_link_return_url, allowHttp)
  const acceptTypes = settings?.accept_types
  const data = settings?.data
  if (
    returnUrl === null ||
    !Array.isArray(acceptTypes) ||
    (data !== undefined && (typeof data !== 'string' || data.length > DATA_LENGTH))
  )
    throw refuse(
      400,
      'deep_linking_settings',
      'The deep-linking request is incomplete',
      'A deep-linking request must carry its settings: an https deep_link_return_url, accept_types, and data (when ' +
        'given) as a string of at most 8192 characters.',
    )
  return {
    returnUrl,
    acceptTypes: acceptTypes.filter((type): type is string => typeof type === 'string').slice(0, 20),
    acceptMultiple: settings?.accept_multiple === true,
    data: typeof data === 'string' ? data : null,
  }
}
