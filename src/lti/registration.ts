/**
 * Registration under /lti (docs/lti.md#registration): the registration URL an operator gives a
 * district (`/register/:token`, Dynamic Registration 1.0), and the tool's configuration as JSON
 * for platforms that paste one (`/configuration.json`, and Canvas's developer-key JSON at
 * `/configuration/canvas.json`).
 *
 * A platform opens the registration URL in its administrator's browser with `openid_configuration`
 * and `registration_token`; the tool reads the configuration, posts its registration, records it
 * pending for the URL's organisation, and answers the page that hands the administrator back. A
 * refusal is a page that says why, with its status; an unknown or revoked URL is a 404.
 */
import type { FastifyError, FastifyInstance } from 'fastify'
import { RegistrationExistsError, recordRegistration, registrationLinkInForce } from '../cases/lti-registrations.js'
import type { Clock } from '../clock.js'
import { ConflictError, NotFoundError } from '../domain/errors.js'
import { canvasConfiguration, registrationRequest } from '../domain/lti-tool-configuration.js'
import { checkPlatformUrl } from '../platforms/platform-fetch.js'
import { fetchPlatformConfiguration, postToolRegistration } from '../platforms/platform-registration.js'
import { isStorageUnavailable, type Storage } from '../storage/connection.js'
import { html } from '../dashboard/html.js'
import { refusedPage, registeredPage, sendRegistrationPage } from './registration-pages.js'

/** What these routes need of the LTI plugin's dependencies. */
export interface RegistrationDeps {
  storage: Storage
  clock: Clock
  publicUrl: string
  allowLoopback: boolean
}

const ASK_OPERATOR = 'Ask the Curriculum operator for a registration URL in force.'
const TRY_AGAIN = 'Start the registration again from the platform; if it fails again, tell the Curriculum operator.'

function queryText(query: unknown, name: string): string | undefined {
  const value = (query as Record<string, unknown> | undefined)?.[name]
  return typeof value === 'string' && value !== '' ? value : undefined
}

export async function registrationRoutes(app: FastifyInstance, deps: RegistrationDeps): Promise<void> {
  const { storage, clock, allowLoopback } = deps
  const stopping = new AbortController()
  app.addHook('onClose', async () => stopping.abort())

  // Only pages here: an error is one too, never the API's problem+json or a bare 500.
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (isStorageUnavailable(error))
      return sendRegistrationPage(
        reply.header('retry-after', '5'),
        allowLoopback,
        refusedPage(503, 'Temporarily unavailable', 'The tool’s database did not answer.', TRY_AGAIN),
      )
    if (error.statusCode !== undefined && error.statusCode < 500)
      return sendRegistrationPage(
        reply,
        allowLoopback,
        refusedPage(400, 'This request could not be read', 'The address or its parameters are malformed.', TRY_AGAIN),
      )
    request.log.error({ err: error }, 'LTI registration error')
    return sendRegistrationPage(
      reply,
      allowLoopback,
      refusedPage(500, 'Something went wrong', `This is on our side; quote reference ${request.id}.`, TRY_AGAIN),
    )
  })

  // No HEAD twin: a HEAD request (a link preview) must not register anything.
  app.get('/register/:token', { schema: { hide: true }, exposeHeadRoute: false }, async (request, reply) => {
    const send = (page: Parameters<typeof sendRegistrationPage>[2]) => sendRegistrationPage(reply, allowLoopback, page)
    const { token } = request.params as { token: string }
    const link = await registrationLinkInForce(storage.db, token)
    if (link === undefined)
      return send(
        refusedPage(404, 'Registration URL not in force', 'This registration URL is unknown or revoked.', ASK_OPERATOR),
      )
    const configurationUrl = queryText(request.query, 'openid_configuration')
    const registrationToken = queryText(request.query, 'registration_token')
    if (configurationUrl === undefined)
      return send(
        refusedPage(
          400,
          'Open this address from your learning platform',
          'This is a dynamic registration URL: the platform opens it with its openid_configuration.',
          'Paste it into the platform’s dynamic registration (Canvas: a developer key’s dynamic registration; ' +
            'Moodle: Tool URL, then Add LTI Advantage).',
        ),
      )
    const checked = checkPlatformUrl(configurationUrl, allowLoopback)
    if (!checked.ok)
      return send(
        refusedPage(
          400,
          'The platform’s configuration address is refused',
          html`The openid_configuration <code>${configurationUrl}</code> is refused: ${checked.reason}`,
          'The tool reads configurations over https from public hosts only.',
        ),
      )

    const options = { allowLoopback, stopping: stopping.signal }
    const configuration = await fetchPlatformConfiguration(configurationUrl, registrationToken, options)
    if (!configuration.ok) {
      request.log.info({ problem: configuration.problem }, 'LTI registration: platform configuration refused')
      return send(
        refusedPage(
          502,
          'The platform’s configuration could not be used',
          html`The configuration at <code>${configurationUrl}</code> was refused: ${configuration.problem}.`,
          TRY_AGAIN,
        ),
      )
    }
    const platform = configuration.value
    const posted = await postToolRegistration(
      platform.registrationEndpoint,
      registrationToken,
      registrationRequest(deps.publicUrl),
      options,
    )
    if (!posted.ok) {
      request.log.info({ problem: posted.problem, issuer: platform.issuer }, 'LTI registration: platform refused it')
      return send(
        refusedPage(
          502,
          'The platform did not take the registration',
          html`Posting the registration to <code>${platform.registrationEndpoint}</code> failed: ${posted.problem}.`,
          TRY_AGAIN,
        ),
      )
    }
    const { clientId, deploymentId, scopes } = posted.value
    const name = `${platform.product ?? 'Platform'} at ${new URL(platform.issuer).host}`.slice(0, 120)
    const deploymentIds = deploymentId === null ? [] : [deploymentId]
    try {
      await recordRegistration(
        storage.db,
        {
          organisationId: link.organisation_id,
          schoolId: link.school_id,
          linkId: link.id,
          method: 'dynamic',
          name,
          issuer: platform.issuer,
          clientId,
          authLoginUrl: platform.authorizationEndpoint,
          tokenUrl: platform.tokenEndpoint,
          tokenAudience: platform.authorizationServer,
          jwksUri: platform.jwksUri,
          product: platform.product,
          scopes,
          deploymentIds,
        },
        { actor: `lti:${platform.issuer}` },
        clock,
      )
    } catch (error) {
      const platformSide = 'The platform made a registration on its side: delete it there before registering again.'
      if (error instanceof RegistrationExistsError)
        return send(refusedPage(409, 'Registered already', error.message, platformSide))
      if (error instanceof NotFoundError)
        return send(refusedPage(404, 'Registration URL not in force', 'Its organisation is gone.', ASK_OPERATOR))
      if (error instanceof ConflictError)
        return send(refusedPage(409, 'This registration cannot be made', error.message, platformSide))
      throw error
    }
    return send(registeredPage({ name, clientId, deploymentIds }))
  })

  // The same object a dynamic registration posts, for platforms that take pasted JSON.
  app.get('/configuration.json', { schema: { hide: true } }, async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=300').send(registrationRequest(deps.publicUrl)),
  )
  app.get('/configuration/canvas.json', { schema: { hide: true } }, async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=300').send(canvasConfiguration(deps.publicUrl)),
  )
}
