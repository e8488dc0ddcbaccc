/**
 * OIDC login initiation (LTI 1.3 Core 5.1.1, 1EdTech Security Framework 5.1.1.1): the platform
 * sends the browser here, by GET or by a form POST, naming itself (`iss`, and `client_id` unless
 * it has one registration of ours), the user (`login_hint`, opaque) and the link. The tool answers
 * with a redirect to the platform's authorization endpoint carrying a fresh state and nonce,
 * which it keeps server-side (cases/lti-login.ts): no cookie could come back with the launch.
 */
import { type Static, Type } from 'typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { startLogin } from '../cases/lti-login.js'
import { isToolUrl } from '../domain/lti-launch.js'
import { LtiRefusal } from '../domain/lti-refusal.js'
import { hasDeployment, registrationByClient, registrationsOfIssuer } from '../storage/lti-registration-repository.js'
import type { LtiRegistrationRow } from '../storage/tables.js'
import type { LaunchDeps } from './launch-context.js'

const Hint = Type.String({ minLength: 1, maxLength: 8192 })
const LoginSchema = Type.Object({
  iss: Type.String({ minLength: 1, maxLength: 2048 }),
  login_hint: Hint,
  target_link_uri: Type.String({ minLength: 1, maxLength: 2048 }),
  lti_message_hint: Type.Optional(Hint),
  client_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  lti_deployment_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
})
type Login = Static<typeof LoginSchema>

/** The registration a login names; throws LtiRefusal when there is none in force. */
async function registrationOf(deps: LaunchDeps, login: Login): Promise<LtiRegistrationRow> {
  const db = deps.storage.db
  let registration: LtiRegistrationRow | undefined
  if (login.client_id !== undefined) registration = await registrationByClient(db, login.iss, login.client_id)
  else {
    const candidates = await registrationsOfIssuer(db, login.iss)
    if (candidates.length > 1)
      throw new LtiRefusal(
        400,
        'client_id_needed',
        'The platform must name its client id',
        `The platform ${login.iss} has several registrations of this tool, and the login did not say which ` +
          `(client_id). Configure the platform to send client_id with its logins.`,
      )
    registration = candidates[0]
  }
  if (registration === undefined)
    throw new LtiRefusal(
      403,
      'unregistered',
      'This platform is not registered',
      `No registration of this tool is for the platform ` +
        `${login.iss}${login.client_id === undefined ? '' : ` with client id ${login.client_id}`}. An operator ` +
        `registers the platform in the dashboard (LTI registrations).`,
    )
  if (registration.status !== 'active')
    throw new LtiRefusal(
      403,
      'registration_inactive',
      'This platform’s registration is not active',
      registration.status === 'pending'
        ? `The registration of ${registration.name} waits for an operator to activate it in the dashboard.`
        : `The registration of ${registration.name} was deactivated by an operator; launches are refused.`,
    )
  if (login.lti_deployment_id !== undefined && !(await hasDeployment(db, registration.id, login.lti_deployment_id)))
    throw unknownDeployment(registration, login.lti_deployment_id)
  return registration
}

export function unknownDeployment(registration: LtiRegistrationRow, deploymentId: string): LtiRefusal {
  return new LtiRefusal(
    403,
    'unknown_deployment',
    'This deployment is not registered',
    `The platform launched from deployment ${deploymentId.slice(0, 255)}, which the registration of ` +
      `${registration.name} does not list. An operator adds the deployment id to the registration in the dashboard.`,
  )
}

/** The platform's authorization URL with the authentication request's parameters (OIDC Core 3.2.2.1). */
function authenticationRequest(
  registration: LtiRegistrationRow,
  login: Login,
  started: { state: string; nonce: string },
  redirectUri: string,
): string {
  let url: URL
  try {
    url = new URL(registration.auth_login_url)
  } catch {
    throw new LtiRefusal(
      502,
      'auth_login_url',
      'The platform’s sign-in address is not usable',
      `The registration of ${registration.name} has no valid authorization URL. An operator corrects it in the ` +
        `dashboard.`,
    )
  }
  const parameters: Record<string, string> = {
    scope: 'openid',
    response_type: 'id_token',
    response_mode: 'form_post',
    prompt: 'none',
    client_id: registration.client_id,
    redirect_uri: redirectUri,
    login_hint: login.login_hint,
    state: started.state,
    nonce: started.nonce,
    ...(login.lti_message_hint === undefined ? {} : { lti_message_hint: login.lti_message_hint }),
  }
  for (const [name, value] of Object.entries(parameters)) url.searchParams.set(name, value)
  return url.toString()
}

export async function loginRoutes(app: FastifyInstance, deps: LaunchDeps): Promise<void> {
  const redirectUri = `${deps.publicUrl}/lti/launch`
  const answer = async (login: Login, reply: FastifyReply) => {
    if (!isToolUrl(deps.publicUrl, login.target_link_uri))
      throw new LtiRefusal(
        400,
        'target_link_uri',
        'The link points at another tool',
        `The login is for ${login.target_link_uri.slice(0, 200)}, which is not an address of this tool ` +
          `(${deps.publicUrl}/lti/). Correct the link or the tool's URLs in the platform.`,
      )
    const registration = await registrationOf(deps, login)
    const started = await startLogin(deps.storage.db, registration.id, deps.clock)
    return reply.redirect(authenticationRequest(registration, login, started, redirectUri), 302)
  }
  app.get(
    '/login',
    { schema: { hide: true, querystring: LoginSchema } },
    (request: FastifyRequest<{ Querystring: Login }>, reply) => answer(request.query, reply),
  )
  app.post('/login', { schema: { hide: true, body: LoginSchema } }, (request: FastifyRequest<{ Body: Login }>, reply) =>
    answer(request.body, reply),
  )
}
