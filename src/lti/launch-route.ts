/**
 * The launch (LTI 1.3 Core 5.1.2): the platform's form post of the id_token and the login's
 * state. A resource link launch answers 303 See Other to the lesson with its sealed player
 * session; a teacher's deep-linking request answers with the lesson picker. A platform that could
 * not sign the user in posts an OpenID error instead, shown as such.
 */
import { Type } from 'typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { openResourceLink } from '../cases/lti-launch.js'
import { MESSAGE } from '../domain/lti-claims.js'
import { DEEP_LINKING_MS, RESOURCE_LINK_ITEM, sealDeepLinkingSession } from '../domain/lti-deep-linking.js'
import type { LaunchFacts } from '../domain/lti-launch.js'
import { sealPlayerSession, SESSION_MS } from '../domain/lti-player-session.js'
import { LtiRefusal } from '../domain/lti-refusal.js'
import { isStaff } from '../domain/lti-roles.js'
import { catalogOutline } from '../storage/catalog-repository.js'
import type { LtiRegistrationRow } from '../storage/tables.js'
import { pickerPage } from './deep-linking-views.js'
import { verifyLaunch } from './launch-verification.js'
import { pageHeaders, sendLtiPage } from './lti-answers.js'
import type { LaunchContext } from './launch-context.js'

const LaunchSchema = Type.Object({
  id_token: Type.Optional(Type.String({ maxLength: 60_000 })),
  state: Type.Optional(Type.String({ maxLength: 200 })),
  error: Type.Optional(Type.String({ maxLength: 200 })),
})
interface LaunchForm {
  id_token?: string
  state?: string
  error?: string
}

/** The OpenID error a platform posts instead of a token (OIDC Core 3.1.2.6), as a refusal. */
function platformError(error: string): LtiRefusal {
  const code = /^[a-z_]{1,64}$/.test(error) ? error : 'unknown'
  return new LtiRefusal(
    401,
    `platform_${code}`,
    'The platform did not sign you in',
    code === 'login_required' || code === 'interaction_required'
      ? 'The learning platform could not tell who you are inside this frame (its sign-in cookie may be blocked). ' +
          'Open the lesson in a new window from the course, or sign in to the platform again.'
      : `The learning platform answered the login with the error “${code}”. Start again from the course; if it ` +
          `lasts, the platform’s administrator can look it up.`,
  )
}

export function launchRoute(app: FastifyInstance, context: LaunchContext): void {
  const { deps } = context
  app.get('/launch', { schema: { hide: true } }, async () => {
    throw new LtiRefusal(
      405,
      'method',
      'Open the lesson from the course',
      'A launch is posted by the learning platform; this address cannot be opened by itself. Open the lesson from ' +
        'the course in the platform.',
    )
  })
  app.post(
    '/launch',
    { schema: { hide: true, body: LaunchSchema } },
    async (request: FastifyRequest<{ Body: LaunchForm }>, reply) => {
      const form = request.body
      if (form.error !== undefined) throw platformError(form.error)
      if (form.id_token === undefined || form.id_token === '' || form.state === undefined || form.state === '')
        throw new LtiRefusal(
          400,
          'form',
          'The launch is incomplete',
          'A launch posts an id_token and the login’s state; this one lacks one of them. Start again from the course.',
        )
      const { registration, launch } = await verifyLaunch(deps, context.platformKeys, {
        idToken: form.id_token,
        state: form.state,
      })
      request.log.info(
        { lti: launch.messageType, registrationId: registration.id, roles: launch.roles },
        'LTI launch verified',
      )
      if (launch.messageType === MESSAGE.deepLinkingRequest) {
        const page = await picker(context, registration, launch)
        return sendLtiPage(pageHeaders(reply, deps.allowLoopback), 200, page)
      }
      const opened = await openResourceLink(
        deps.storage.db,
        registration,
        launch as LaunchFacts & { resourceLinkId: string },
        deps.clock,
      )
      const sealed = sealPlayerSession(context.playerKey, {
        registrationId: registration.id,
        studentId: opened.studentId,
        resourceLinkId: launch.resourceLinkId,
        lessonSlug: opened.lesson.slug,
        roles: launch.roles,
        expiresAt: deps.clock.now() + SESSION_MS,
      })
      return reply.redirect(`/lti/lesson?s=${encodeURIComponent(sealed)}`, 303)
    },
  )
}

async function picker(context: LaunchContext, registration: LtiRegistrationRow, launch: LaunchFacts): Promise<string> {
  const settings = launch.deepLinking!
  if (!isStaff(launch.roles))
    throw new LtiRefusal(
      403,
      'deep_linking_role',
      'Only teachers add lessons',
      'Adding lessons to a course is for its instructors and administrators. Ask your teacher to add the lesson.',
    )
  if (!settings.acceptTypes.includes(RESOURCE_LINK_ITEM))
    throw new LtiRefusal(
      400,
      'accept_types',
      'The platform does not take lessons here',
      'This place in the platform accepts no LTI resource links (ltiResourceLink), which is how the tool adds a ' +
        'lesson. Add the lesson from an assignment or module instead.',
    )
  const { deps } = context
  const sealed = sealDeepLinkingSession(context.deepLinkingKey, {
    registrationId: registration.id,
    deploymentId: launch.deploymentId,
    returnUrl: settings.returnUrl,
    data: settings.data,
    acceptTypes: settings.acceptTypes,
    acceptMultiple: settings.acceptMultiple,
    expiresAt: deps.clock.now() + DEEP_LINKING_MS,
  })
  const { tiers, lessons } = await catalogOutline(deps.storage.db)
  return pickerPage({ sealed, tiers, lessons, acceptMultiple: settings.acceptMultiple })
}
