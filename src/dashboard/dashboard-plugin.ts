/**
 * The administrative dashboard under /dashboard: server-rendered HTML and plain forms (it works
 * with JavaScript off), for partners (sign up, sandbox, apply, keys, usage, their disclosure log)
 * and for the operator (review queue, organisations, agreements, disclosure log, audit log).
 *
 * Everything here is encapsulated: its form parser, error pages and security headers apply to
 * /dashboard only, and the API keeps answering JSON and problem+json. The pages themselves are
 * plugins of their own, one per page group, under pages/.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { sharedSecret } from '../cases/shared-settings.js'
import { IllegalTransition } from '../domain/application-state.js'
import { ConflictError, NotFoundError } from '../domain/errors.js'
import { isStorageUnavailable } from '../storage/connection.js'
import { signingKeySource } from '../services/signing-keys.js'
import { DASHBOARD_CSS, DASHBOARD_JS } from './assets.js'
import { continuePage, crossSiteSource } from './cross-site-navigation.js'
import type { DashboardContext, DashboardDeps } from './dashboard-context.js'
import { DashboardError } from './dashboard-error.js'
import type { FormBody } from './forms.js'
import { html } from './html.js'
import { createKeyViews } from './key-views.js'
import { createAfterAnswer } from './after-answer.js'
import { accountPages } from './pages/account/index.js'
import { authPages } from './pages/auth/index.js'
import { invitationPages } from './pages/invitations/index.js'
import { passkeyPages } from './pages/passkeys/index.js'
import { operatorPages } from './pages/operator/index.js'
import { partnerPages } from './pages/partner/index.js'
import { recoveryPages } from './pages/recovery/index.js'
import { sendPage } from './send-page.js'
import { createSessionSupport } from './session.js'
import { noticeContext } from './notice-context.js'
import { createSignInGuard } from './sign-in-guard.js'
import { twoStepGate } from './two-step-gate.js'

/** script-src 'self' allows only /dashboard/assets/dashboard.js; no inline script or style. */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ')

function securityHeaders(reply: FastifyReply): void {
  reply.header('content-security-policy', DASHBOARD_CSP)
  reply.header('x-content-type-options', 'nosniff')
  reply.header('x-frame-options', 'DENY')
  reply.header('referrer-policy', 'same-origin')
  // Pages can show keys and children's names: never keep them in a cache.
  reply.header('cache-control', 'no-store')
}

function errorPage(request: FastifyRequest, reply: FastifyReply, error: DashboardError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value)
  securityHeaders(reply)
  return sendPage(
    request,
    reply,
    error.title,
    html`<p>${error.detail}</p><p><a href="/dashboard">Back to the dashboard</a></p>`,
    error.status,
  )
}

export async function dashboardPlugin(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const secret = await sharedSecret(deps.storage.db, 'dashboard-csrf')
  const sessions = createSessionSupport({
    db: deps.storage.db,
    clock: deps.clock,
    secret,
    notices: noticeContext(deps),
  })
  const guard = createSignInGuard({ clock: deps.clock, limiters: deps.limiters })
  const keyViews = createKeyViews({
    db: deps.storage.db,
    clock: deps.clock,
    secret: await sharedSecret(deps.storage.db, 'dashboard-key-view'),
    sessions,
  })
  const signingKey = deps.signingKey ?? signingKeySource(deps.storage.db)
  const afterAnswer = createAfterAnswer(app.log)
  app.addHook('onClose', () => afterAnswer.idle())
  const context: DashboardContext = { ...deps, signingKey, sessions, guard, keyViews, afterAnswer }

  app.decorateRequest('account', null)
  app.decorateRequest('csrfToken', '')
  app.decorateRequest('sessionId', null)
  app.decorateRequest('awaitingCode', null)

  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 16_384 },
    (_request, body, done) => {
      const form: FormBody = {}
      for (const [name, value] of new URLSearchParams(body as string)) {
        const existing = form[name]
        form[name] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value]
      }
      done(null, form)
    },
  )

  app.addHook('onRequest', async (_request, reply) => securityHeaders(reply))
  app.addHook('preHandler', async (request, reply) => {
    await sessions.load(request, reply)
    if ((await twoStepGate(request, reply, deps.storage.db)) !== undefined) return reply
    const access = request.routeOptions.config.dashboard
    if (access === undefined || access === 'public') return
    if (request.account === null) {
      const next = request.method === 'GET' ? `?next=${encodeURIComponent(request.url)}` : ''
      return reply.redirect(`/dashboard/login${next}`, 303)
    }
    if (access !== 'signed-in' && request.account.role !== access) {
      throw new DashboardError(
        403,
        'Not for this account',
        'This page belongs to another kind of account. Use the navigation to find your own pages.',
      )
    }
    if (request.routeOptions.config.studentData !== true) return
    const source = crossSiteSource(request)
    if (source !== null) {
      request.log.info({ source }, 'page with student data opened from elsewhere: continue page instead')
      return continuePage(request, reply)
    }
  })

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof DashboardError) return errorPage(request, reply, error)
    if (error instanceof IllegalTransition || error instanceof ConflictError)
      return errorPage(request, reply, new DashboardError(409, 'That cannot be done now', error.message))
    if (error instanceof NotFoundError)
      return errorPage(
        request,
        reply,
        new DashboardError(404, 'Not found', 'There is nothing here, or it belongs to someone else.'),
      )
    if (error.statusCode === 413)
      return errorPage(
        request,
        reply,
        new DashboardError(
          413,
          'Too much text',
          'The form was too long. Shorten the longest answer and send it again.',
        ),
      )
    if (error.statusCode === 415 || error.statusCode === 400)
      return errorPage(
        request,
        reply,
        new DashboardError(400, 'The form could not be read', 'Send the form from its page in the dashboard.'),
      )
    if (isStorageUnavailable(error)) {
      return errorPage(
        request,
        reply,
        new DashboardError(503, 'Temporarily unavailable', 'The database did not answer. Try again in a moment.', {
          'retry-after': '5',
        }),
      )
    }
    request.log.error({ err: error }, 'dashboard error')
    return errorPage(
      request,
      reply,
      new DashboardError(
        500,
        'Something went wrong',
        `This is on our side. Quote reference ${request.id} to the operator.`,
      ),
    )
  })
  app.setNotFoundHandler(async (request, reply) => {
    await sessions.load(request, reply).catch(() => {})
    return errorPage(request, reply, new DashboardError(404, 'Page not found', 'There is no page at this address.'))
  })

  app.get('/assets/dashboard.css', { config: { dashboard: 'public' } }, (_request, reply) =>
    reply.header('cache-control', 'public, max-age=3600').type('text/css; charset=utf-8').send(DASHBOARD_CSS),
  )
  app.get('/assets/dashboard.js', { config: { dashboard: 'public' } }, (_request, reply) =>
    reply.header('cache-control', 'public, max-age=3600').type('text/javascript; charset=utf-8').send(DASHBOARD_JS),
  )

  // One encapsulated plugin per area, and inside each one per page group (pages/<area>/<group>/):
  // they inherit the hooks, parser and error pages above, and register nothing the others see.
  await app.register(authPages, { context })
  await app.register(recoveryPages, { context })
  await app.register(accountPages, { context })
  await app.register(invitationPages, { context })
  await app.register(passkeyPages, { context })
  await app.register(partnerPages, { prefix: '/partner', context })
  await app.register(operatorPages, { prefix: '/operator', context })
}
