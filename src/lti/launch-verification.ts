/**
 * The checks of a launch's id_token (1EdTech Security Framework 5.1.3, LTI 1.3 Core 5.1.2), in the
 * order that lets each refusal say what is wrong: the form, the token's shape and algorithm
 * (never none or a shared-secret HS*), the login's state (known, unused, in time), the
 * registration (still active), the signature by the platform's key (jose, against its key set),
 * issuer, audience, times with a small skew, then the nonce, `azp`, the LTI claims and the
 * deployment. Every failure is an LtiRefusal; no claim of the token is logged or kept beyond
 * what readLaunch copies out.
 */
import { decodeProtectedHeader, errors, jwtVerify, type JWTPayload, type ProtectedHeaderParameters } from 'jose'
import { claimLogin, LOGIN_MS } from '../cases/lti-login.js'
import { type LaunchFacts, readLaunch } from '../domain/lti-launch.js'
import { LtiRefusal } from '../domain/lti-refusal.js'
import type { PlatformKeys } from '../services/lti-platform-keys.js'
import { hasDeployment, registrationById } from '../storage/lti-registration-repository.js'
import type { LtiRegistrationRow } from '../storage/tables.js'
import { unknownDeployment } from './login-route.js'
import type { LaunchDeps } from './launch-context.js'

/** The asymmetric algorithms a platform may sign with; LTI requires RS256 of every platform. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512']
/** How far apart the platform's clock and ours may be. */
export const SKEW_SECONDS = 60

export interface VerifiedLaunch {
  registration: LtiRegistrationRow
  launch: LaunchFacts
}

const unauthentic = (reason: string, title: string, detail: string) => new LtiRefusal(401, reason, title, detail)
const START_AGAIN = 'Start the launch again from the course in the learning platform.'

function headerOf(idToken: string): ProtectedHeaderParameters {
  try {
    return decodeProtectedHeader(idToken)
  } catch {
    throw new LtiRefusal(
      400,
      'malformed_token',
      'The launch could not be read',
      `The id_token is not a signed JWT. ${START_AGAIN}`,
    )
  }
}

function checkAlgorithm(header: ProtectedHeaderParameters): void {
  const alg = typeof header.alg === 'string' ? header.alg : ''
  if (idTokenAlgorithmAllowed(alg)) return
  throw unauthentic(
    'algorithm',
    'The launch is not signed as LTI requires',
    alg === 'none' || alg === ''
      ? 'The id_token is not signed (alg none). LTI launches are signed with the platform’s private key (RS256).'
      : `The id_token is signed with ${alg.slice(0, 20)}; LTI launches are signed with the platform’s private key ` +
          `(RS256), never a shared secret.`,
  )
}

export function idTokenAlgorithmAllowed(alg: string): boolean {
  return ALGORITHMS.includes(alg)
}

/** jose's verdicts, as the page tells them; jose's errors carry the claims, so they go no further. */
function refusalOfJose(
  error: unknown,
  registration: LtiRegistrationRow,
  header: ProtectedHeaderParameters,
): LtiRefusal {
  const kid = typeof header.kid === 'string' ? header.kid.slice(0, 100) : '(none)'
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys)
    return unauthentic(
      'unknown_kid',
      'The launch is signed with an unknown key',
      `The id_token names the key ${kid}, which the platform’s key set (${registration.jwks_uri}) does not hold. If ` +
        `the platform has just rotated its keys, launch again in a few seconds; otherwise check the registration’s ` +
        `key set URL in the dashboard.`,
    )
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return unauthentic(
      'signature',
      'The launch’s signature is not the platform’s',
      `The id_token’s signature does not match the platform’s key ${kid}. ${START_AGAIN}`,
    )
  if (error instanceof errors.JWTExpired)
    return unauthentic(
      'expired',
      'The launch has expired',
      `The id_token has expired or was issued too long ago (the tool allows ${LOGIN_MS / 60_000} minutes and ` +
        `${SKEW_SECONDS} seconds of clock difference). ${START_AGAIN} If it keeps happening, check the platform’s ` +
        `clock.`,
    )
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.reason !== 'check_failed')
      return unauthentic(
        'claims',
        'The launch lacks a required claim',
        `The id_token’s “${error.claim.slice(0, 40)}” is missing or malformed. ${START_AGAIN}`,
      )
    if (error.claim === 'iss')
      return unauthentic(
        'issuer',
        'The launch comes from another platform',
        `The id_token’s issuer is not ${registration.issuer}, the platform this login was for. Check the ` +
          `registration’s issuer in the dashboard.`,
      )
    if (error.claim === 'aud')
      return unauthentic(
        'audience',
        'The launch is meant for another tool',
        `The id_token’s audience does not include this tool’s client id ${registration.client_id}. Check the client ` +
          `id of the registration in the dashboard.`,
      )
    if (error.claim === 'iat' || error.claim === 'nbf')
      return unauthentic(
        'issued_at',
        'The launch is dated in the future',
        `The id_token is issued (or valid) from a time ahead of the tool’s clock by more than ${SKEW_SECONDS} ` +
          `seconds. Check the platform’s clock.`,
      )
    return unauthentic(
      'claims',
      'The launch’s claims are not accepted',
      `The id_token’s “${error.claim.slice(0, 40)}” is not accepted. ${START_AGAIN}`,
    )
  }
  if (error instanceof errors.JOSEAlgNotAllowed)
    return unauthentic(
      'algorithm',
      'The launch is not signed as LTI requires',
      'The id_token’s algorithm is not accepted.',
    )
  if (error instanceof errors.JOSEError)
    return new LtiRefusal(
      400,
      'malformed_token',
      'The launch could not be read',
      `The id_token is malformed. ${START_AGAIN}`,
    )
  throw error
}

export async function verifyLaunch(
  deps: LaunchDeps,
  keys: PlatformKeys,
  form: { idToken: string; state: string },
): Promise<VerifiedLaunch> {
  const header = headerOf(form.idToken)
  checkAlgorithm(header)
  const db = deps.storage.db
  const login = await claimLogin(db, form.state, deps.clock)
  if (login.kind === 'unknown')
    throw unauthentic(
      'state',
      'This launch is not one the tool started',
      `The launch’s state is unknown or was used already: each login is good for one launch. ${START_AGAIN}`,
    )
  if (login.kind === 'ended')
    throw unauthentic(
      'state_ended',
      'The sign-in took too long',
      `The platform answered the login more than ${LOGIN_MS / 60_000} minutes after it started. ${START_AGAIN}`,
    )
  const registration = await registrationById(db, login.registrationId)
  if (registration === undefined || registration.status !== 'active')
    throw new LtiRefusal(
      403,
      'registration_inactive',
      'This platform’s registration is not active',
      'The registration was deactivated after the login started; launches are refused. An operator activates it in ' +
        'the dashboard.',
    )
  let payload: JWTPayload
  try {
    ;({ payload } = await jwtVerify(form.idToken, keys.keyFor(registration), {
      issuer: registration.issuer,
      audience: registration.client_id,
      algorithms: ALGORITHMS,
      currentDate: new Date(deps.clock.now()),
      clockTolerance: SKEW_SECONDS,
      maxTokenAge: LOGIN_MS / 1000,
      requiredClaims: ['exp', 'iat', 'nonce'],
    }))
  } catch (error) {
    throw refusalOfJose(error, registration, header)
  }
  const launch = readLaunch(payload, {
    clientId: registration.client_id,
    nonce: login.nonce,
    toolUrl: deps.publicUrl,
    allowHttp: deps.allowLoopback,
  })
  if (!(await hasDeployment(db, registration.id, launch.deploymentId)))
    throw unknownDeployment(registration, launch.deploymentId)
  return { registration, launch }
}
