/**
 * The deep-linking response (Deep Linking 2.0 section 4.2): the teacher's choice from the picker,
 * signed by the tool's key (RS256, its kid in the header) as a JWT the page posts to the
 * platform's deep_link_return_url by itself (or with its Continue button, without JavaScript).
 */
import { Type } from 'typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { SignJWT } from 'jose'
import { list, type FormBody } from '../dashboard/forms.js'
import { type ChosenLesson, deepLinkingResponseClaims, openDeepLinkingSession } from '../domain/lti-deep-linking.js'
import { LtiRefusal } from '../domain/lti-refusal.js'
import { catalogOutline } from '../storage/catalog-repository.js'
import { registrationById } from '../storage/lti-registration-repository.js'
import { pickerPage } from './deep-linking-views.js'
import { pageHeaders, sendLtiPage } from './lti-answers.js'
import { autoPostPage } from './lti-page.js'
import type { LaunchContext } from './launch-context.js'

const DeepLinkSchema = Type.Object({
  dl: Type.String({ minLength: 1, maxLength: 16_384 }),
  lesson: Type.Optional(
    Type.Union([Type.String({ maxLength: 200 }), Type.Array(Type.String({ maxLength: 200 }), { maxItems: 200 })]),
  ),
})

export function deepLinkRoute(app: FastifyInstance, context: LaunchContext): void {
  const { deps } = context
  app.post(
    '/deep-link',
    { schema: { hide: true, body: DeepLinkSchema } },
    async (request: FastifyRequest<{ Body: FormBody & { dl: string } }>, reply) => {
      const now = deps.clock.now()
      const session = openDeepLinkingSession(context.deepLinkingKey, request.body.dl, now)
      if (session === undefined)
        throw new LtiRefusal(
          400,
          'deep_linking_session',
          'This lesson picker has expired',
          'The picker is good for an hour after the platform opened it. Open it again from the course’s “add ' +
            'content” step.',
        )
      const registration = await registrationById(deps.storage.db, session.registrationId)
      if (registration === undefined || registration.status !== 'active')
        throw new LtiRefusal(
          403,
          'registration_inactive',
          'This platform’s registration is not active',
          'The registration was deactivated after the picker opened. An operator activates it in the dashboard.',
        )
      const chosen = [...new Set(list(request.body, 'lesson'))]
      const { tiers, lessons } = await catalogOutline(deps.storage.db)
      const bySlug = new Map(lessons.map((lesson) => [lesson.slug, lesson]))
      const again = (error: string) =>
        sendLtiPage(
          pageHeaders(reply, deps.allowLoopback),
          400,
          pickerPage({
            sealed: request.body.dl,
            tiers,
            lessons,
            acceptMultiple: session.acceptMultiple,
            error,
            chosen: new Set(chosen),
          }),
        )
      if (chosen.length === 0) return again('Choose a lesson to add.')
      if (chosen.length > 1 && !session.acceptMultiple) return again('The platform takes one lesson here: choose one.')
      const picked: ChosenLesson[] = []
      for (const slug of chosen) {
        const lesson = bySlug.get(slug)
        if (lesson === undefined) return again('A lesson you chose is no longer in the catalog: choose again.')
        picked.push({ slug: lesson.slug, title: lesson.title })
      }
      const key = await deps.toolKeys.current()
      const claims = deepLinkingResponseClaims(
        session,
        picked,
        {
          clientId: registration.client_id,
          platformIssuer: registration.issuer,
          launchUrl: `${deps.publicUrl}/lti/launch`,
        },
        now,
      )
      const jwt = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: key.publicJwk.kid, typ: 'JWT' })
        .sign(key.privateKey)
      request.log.info(
        { lti: 'deep_linking_response', registrationId: registration.id, items: picked.length },
        'LTI deep linking answered',
      )
      const page = autoPostPage(
        'Adding to the course',
        `Sending ${picked.length === 1 ? 'the lesson' : `${picked.length} lessons`} to the learning platform.`,
        session.returnUrl,
        { JWT: jwt },
      )
      return sendLtiPage(
        pageHeaders(reply, deps.allowLoopback, { formAction: new URL(session.returnUrl).origin, autoPost: true }),
        200,
        page,
      )
    },
  )
}
