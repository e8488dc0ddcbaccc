/**
 * How the tool's pages answer, for every route under /lti: url-encoded forms read here (a launch
 * is a form the platform posts, its id_token a few kilobytes), the headers of a page shown inside
 * a platform's iframe, and every refusal or failure as a page with the right status and words an
 * operator can act on. Nothing a platform or a user sends ends in a 500, and nothing it sent (the
 * id_token, its claims) is logged: a refusal logs its reason alone.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { errors as jose } from 'jose'
import { html } from '../dashboard/html.js'
import type { FormBody } from '../dashboard/forms.js'
import { LtiRefusal } from '../domain/lti-refusal.js'
import { PlatformKeysUnavailable } from '../services/lti-platform-keys.js'
import { isStorageUnavailable } from '../storage/connection.js'
import { ltiContentSecurityPolicy, ltiPage, type PageOptions } from './lti-page.js'

/** An id_token with many claims is some 10 KB; four times that and a form's other fields fit. */
export const LTI_FORM_LIMIT = 64 * 1024

export function pageHeaders(reply: FastifyReply, allowHttp: boolean, options: PageOptions = {}): FastifyReply {
  return reply
    .header('content-security-policy', ltiContentSecurityPolicy({ ...options, allowHttp }))
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-store')
    .header('x-content-type-options', 'nosniff')
}

/** Sends an HTML page (headers as `pageHeaders` set them). */
export function sendLtiPage(reply: FastifyReply, status: number, page: string): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(page)
}

function refusalPage(request: FastifyRequest, refusal: LtiRefusal): string {
  return ltiPage(
    refusal.title,
    html`<p>${refusal.message}</p>
<p class="reason">Reason: <code>${refusal.reason}</code>. Reference: <code>${request.id}</code>.</p>`,
  )
}

/** What Fastify itself refuses before a handler runs (the form's size, type or shape), as a refusal. */
function refusalOfFastify(error: FastifyError): LtiRefusal | undefined {
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return new LtiRefusal(
      413,
      'too_large',
      'The form is too large',
      `The tool accepts forms of at most ${LTI_FORM_LIMIT / 1024} KB. A launch this large is not one this tool can ` +
        `take.`,
    )
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return new LtiRefusal(
      415,
      'media_type',
      'The form could not be read',
      'The tool reads forms sent as application/x-www-form-urlencoded, as LTI platforms post them.',
    )
  if (error.validation !== undefined)
    return new LtiRefusal(
      400,
      'malformed',
      'The request is not what LTI sends here',
      `${error.message} Start again from the course in the learning platform.`,
    )
  if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500)
    return new LtiRefusal(
      400,
      'malformed',
      'The request could not be read',
      'Start again from the course in the learning platform.',
    )
  return undefined
}

export function answerWithPages(app: FastifyInstance, options: { allowHttp: boolean }): void {
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: LTI_FORM_LIMIT },
    (_request, body, done) => {
      const form: FormBody = Object.create(null)
      for (const [name, value] of new URLSearchParams(body as string)) {
        const existing = form[name]
        form[name] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value]
      }
      done(null, form)
    },
  )
  app.addHook('onRequest', async (_request, reply) => {
    pageHeaders(reply, options.allowHttp)
  })

  app.setErrorHandler((error: FastifyError, request, reply) => {
    let refusal = error instanceof LtiRefusal ? error : refusalOfFastify(error)
    // A token's claims ride on jose's errors: only its code is logged.
    if (refusal === undefined && error instanceof jose.JOSEError) {
      request.log.warn({ lti: 'jose', code: error.code }, 'LTI token error reached the error page')
      refusal = new LtiRefusal(400, 'token', 'The token could not be read', 'Start again from the course.')
    }
    if (refusal === undefined && error instanceof PlatformKeysUnavailable)
      refusal = new LtiRefusal(
        502,
        'platform_keys',
        'The platform’s keys could not be fetched',
        `The launch cannot be checked without the platform’s public keys: ${error.message}. Try again in a minute; ` +
          `if it lasts, check the registration’s key set URL in the dashboard.`,
      )
    if (refusal !== undefined) {
      request.log.info({ lti: refusal.reason, status: refusal.status }, 'LTI request refused')
      if (refusal.status === 405) reply.header('allow', 'POST')
      return sendLtiPage(pageHeaders(reply, options.allowHttp), refusal.status, refusalPage(request, refusal))
    }
    const unavailable = isStorageUnavailable(error)
    if (unavailable) reply.header('retry-after', '5')
    else request.log.error({ err: error }, 'LTI error')
    const failure = unavailable
      ? new LtiRefusal(
          503,
          'unavailable',
          'Temporarily unavailable',
          'The database did not answer. Try again in a moment.',
        )
      : new LtiRefusal(
          500,
          'internal',
          'Something went wrong',
          'This is on our side. Quote the reference below to the tool’s operator.',
        )
    return sendLtiPage(pageHeaders(reply, options.allowHttp), failure.status, refusalPage(request, failure))
  })
  app.setNotFoundHandler((request, reply) =>
    sendLtiPage(
      pageHeaders(reply, options.allowHttp),
      404,
      refusalPage(
        request,
        new LtiRefusal(404, 'not_found', 'Page not found', 'There is no page of the LTI tool at this address.'),
      ),
    ),
  )
}
