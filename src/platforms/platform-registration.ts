/**
 * The tool's half of Dynamic Registration 1.0 (docs/lti.md#registration): read a platform's
 * OpenID configuration and check it, then post the tool's registration to the platform's
 * registration endpoint and read the client id (and deployment id) it answers with. Both
 * requests go through platform-fetch.ts (https, checked addresses, a deadline, a size limit).
 *
 * The configuration's issuer must be on the host its configuration was fetched from (section
 * 3.5.1), so a platform cannot claim another's issuer; its endpoints may be elsewhere (hosted
 * Canvas: issuer https://canvas.instructure.com, endpoints on https://sso.canvaslms.com).
 */
import { PLATFORM_CONFIGURATION, TOOL_CONFIGURATION, TOOL_SCOPES } from '../domain/lti-claims.js'
import { checkPlatformUrl, platformJson } from './platform-fetch.js'

/** Larger than any platform's configuration seen (Canvas lists its placements and variables). */
export const CONFIGURATION_MAX_BYTES = 256 * 1024
export const REGISTRATION_TIMEOUT_MS = 10_000

export interface PlatformConfiguration {
  issuer: string
  authorizationEndpoint: string
  tokenEndpoint: string
  jwksUri: string
  registrationEndpoint: string
  /** `authorization_server`: the audience of the tool's client assertions, when advertised. */
  authorizationServer: string | null
  /** `lti_platform_configuration.product_family_code`: canvas, moodle… */
  product: string | null
}

export interface RegistrationOptions {
  allowLoopback: boolean
  timeoutMs?: number
  /** Aborted when the server stops. */
  stopping?: AbortSignal
}

export type Outcome<T> = { ok: true; value: T } | { ok: false; problem: string }

const printable = (value: string, max: number) => value.length <= max && !/\p{Cc}/u.test(value)

function text(value: unknown, max: number): string | null {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value)
  if (typeof value !== 'string') return null
  const trimmed = value.trim()
  return trimmed !== '' && printable(trimmed, max) ? trimmed : null
}

/** The configuration in `json`, fetched from `configurationUrl`, as the tool accepts it, or why not. */
export function readPlatformConfiguration(
  json: Record<string, unknown>,
  configurationUrl: string,
  allowLoopback: boolean,
): Outcome<PlatformConfiguration> {
  const issuer = text(json.issuer, 2048)
  if (issuer === null) return { ok: false, problem: 'it names no issuer' }
  const issuerUrl = checkPlatformUrl(issuer, allowLoopback)
  if (!issuerUrl.ok) return { ok: false, problem: `its issuer ${issuer} is not an address the tool accepts` }
  const from = new URL(configurationUrl).host
  if (issuerUrl.url.host !== from)
    return {
      ok: false,
      problem: `its issuer ${issuer} is not on ${from}, where the configuration came from`,
    }
  const endpoints: Record<string, string> = {}
  for (const name of ['authorization_endpoint', 'token_endpoint', 'jwks_uri', 'registration_endpoint']) {
    const value = text(json[name], 2048)
    if (value === null) return { ok: false, problem: `it has no ${name}` }
    const checked = checkPlatformUrl(value, allowLoopback)
    if (!checked.ok) return { ok: false, problem: `its ${name} ${value} is refused: ${checked.reason}` }
    endpoints[name] = value
  }
  const methods = json.token_endpoint_auth_methods_supported
  if (Array.isArray(methods) && !methods.includes('private_key_jwt'))
    return { ok: false, problem: 'its token endpoint does not take private_key_jwt client assertions' }
  const algorithms = json.id_token_signing_alg_values_supported
  if (Array.isArray(algorithms) && !algorithms.includes('RS256'))
    return { ok: false, problem: 'it does not sign id_tokens with RS256' }
  const platform = json[PLATFORM_CONFIGURATION]
  const product =
    platform !== null && typeof platform === 'object'
      ? text((platform as Record<string, unknown>).product_family_code, 120)
      : null
  return {
    ok: true,
    value: {
      issuer,
      authorizationEndpoint: endpoints.authorization_endpoint!,
      tokenEndpoint: endpoints.token_endpoint!,
      jwksUri: endpoints.jwks_uri!,
      registrationEndpoint: endpoints.registration_endpoint!,
      authorizationServer: text(json.authorization_server, 2048),
      product,
    },
  }
}

const bearer = (token: string | undefined): Record<string, string> =>
  token === undefined ? {} : { authorization: `Bearer ${token}` }

/** What a platform's error answer says, short and on one line, for the page that reports it. */
function platformSays(json: Record<string, unknown> | undefined): string {
  if (json === undefined) return ''
  const said = [json.error, json.error_description, json.message]
    .filter((part): part is string => typeof part === 'string')
    .join(': ')
    .replace(/\p{Cc}+/gu, ' ')
  return said === '' ? '' : ` (${said.slice(0, 300)})`
}

/**
 * Fetches and checks the platform's OpenID configuration. Canvas asks for the registration token
 * on this request too, so it is sent when the platform gave one.
 */
export async function fetchPlatformConfiguration(
  configurationUrl: string,
  registrationToken: string | undefined,
  options: RegistrationOptions,
): Promise<Outcome<PlatformConfiguration>> {
  const answer = await platformJson(configurationUrl, {
    method: 'GET',
    headers: { accept: 'application/json', ...bearer(registrationToken) },
    timeoutMs: options.timeoutMs ?? REGISTRATION_TIMEOUT_MS,
    allowLoopback: options.allowLoopback,
    maxBytes: CONFIGURATION_MAX_BYTES,
    ...(options.stopping === undefined ? {} : { stopping: options.stopping }),
  })
  if (!answer.ok)
    return {
      ok: false,
      problem:
        answer.status === null
          ? `it could not be read: ${answer.error}`
          : `it answered ${answer.status} with ${answer.error}`,
    }
  if (answer.status !== 200) return { ok: false, problem: `it answered ${answer.status}${platformSays(answer.json)}` }
  return readPlatformConfiguration(answer.json, configurationUrl, options.allowLoopback)
}

export interface PlatformRegistration {
  clientId: string
  /** The deployment the registration made, when the platform says (Moodle does; Canvas does not). */
  deploymentId: string | null
  /** The scopes granted: of those asked for, the ones the answer names (all, when it names none). */
  scopes: string[]
}

/** Posts the tool's registration with the platform's registration token, when it gave one. */
export async function postToolRegistration(
  registrationEndpoint: string,
  registrationToken: string | undefined,
  body: Record<string, unknown>,
  options: RegistrationOptions,
): Promise<Outcome<PlatformRegistration>> {
  const answer = await platformJson(registrationEndpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...bearer(registrationToken) },
    body: JSON.stringify(body),
    timeoutMs: options.timeoutMs ?? REGISTRATION_TIMEOUT_MS,
    allowLoopback: options.allowLoopback,
    maxBytes: CONFIGURATION_MAX_BYTES,
    ...(options.stopping === undefined ? {} : { stopping: options.stopping }),
  })
  if (!answer.ok)
    return {
      ok: false,
      problem:
        answer.status === null
          ? `the registration could not be sent: ${answer.error}`
          : `the platform answered ${answer.status} with ${answer.error}`,
    }
  if (answer.status < 200 || answer.status > 299)
    return { ok: false, problem: `the platform refused it with ${answer.status}${platformSays(answer.json)}` }
  const clientId = text(answer.json.client_id, 255)
  if (clientId === null) return { ok: false, problem: 'the platform answered without a client id' }
  const tool = answer.json[TOOL_CONFIGURATION]
  const deployment =
    tool !== null && typeof tool === 'object' ? (tool as Record<string, unknown>).deployment_id : undefined
  const deploymentId = deployment === undefined ? null : text(deployment, 255)
  if (deployment !== undefined && (deploymentId === null || !DEPLOYMENT_ID.test(deploymentId)))
    return { ok: false, problem: 'the platform answered with a deployment id that is not 1 to 255 ASCII characters' }
  const granted = typeof answer.json.scope === 'string' ? answer.json.scope.split(/\s+/) : undefined
  const scopes = granted === undefined ? [...TOOL_SCOPES] : TOOL_SCOPES.filter((scope) => granted.includes(scope))
  return { ok: true, value: { clientId, deploymentId, scopes } }
}

/** LTI 1.3 section 3.1.3: a deployment id is case-sensitive, at most 255 ASCII characters. */
export const DEPLOYMENT_ID = /^[\x21-\x7e]{1,255}$/

/** What an operator types to register a platform by hand (docs/lti.md#manual-registration). */
export interface ManualRegistrationFields {
  name: string
  issuer: string
  clientId: string
  deploymentIds: readonly string[]
  authLoginUrl: string
  tokenUrl: string
  tokenAudience: string
  jwksUri: string
}

/** Each field's problem, by field name; empty when the registration may be recorded. */
export function manualRegistrationProblems(
  fields: ManualRegistrationFields,
  allowLoopback: boolean,
): Record<string, string> {
  const problems: Record<string, string> = {}
  if (fields.name === '' || !printable(fields.name, 120))
    problems.name = 'Enter a name of 1 to 120 characters, on one line.'
  const url = (name: keyof ManualRegistrationFields, value: string, label: string) => {
    if (value === '') problems[name] = `Enter the platform’s ${label}.`
    else {
      const checked = checkPlatformUrl(value, allowLoopback)
      if (!checked.ok) problems[name] = `The ${label}: ${checked.reason}`
    }
  }
  url('issuer', fields.issuer, 'issuer')
  if (problems.issuer === undefined && /[?#]/.test(fields.issuer))
    problems.issuer = 'The issuer has no query or fragment (OpenID Connect Core 1.0 section 2).'
  if (fields.clientId === '' || !printable(fields.clientId, 255))
    problems.clientId = 'Enter the client id the platform gave, 1 to 255 characters.'
  if (fields.deploymentIds.length === 0) problems.deploymentIds = 'Enter at least one deployment id.'
  else if (fields.deploymentIds.length > 50) problems.deploymentIds = 'Enter at most 50 deployment ids here.'
  else if (!fields.deploymentIds.every((id) => DEPLOYMENT_ID.test(id)))
    problems.deploymentIds = 'A deployment id is 1 to 255 ASCII characters without spaces; one per line.'
  url('authLoginUrl', fields.authLoginUrl, 'authentication request URL')
  url('tokenUrl', fields.tokenUrl, 'access token URL')
  url('jwksUri', fields.jwksUri, 'key set URL')
  if (fields.tokenAudience !== '' && !printable(fields.tokenAudience, 2048))
    problems.tokenAudience = 'The token audience is one line of at most 2048 characters.'
  return problems
}
