/**
 * A partner's webhook endpoints: register one (live endpoints hear about the organisation's real
 * students, test ones about the sandbox's), see its signing secret once, roll it, disable or
 * enable it, read its delivery log, resend a delivery and send a test event.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import {
  addEndpoint,
  enableEndpoint,
  resendDelivery,
  rollEndpointSecret,
  sendTestEvent,
} from '../../../../cases/webhook-endpoints.js'
import type { KeyMode } from '../../../../domain/api-key.js'
import { isWebhookEvent, MANUAL_SENDS, REFUSAL_REASONS } from '../../../../domain/webhook-events.js'
import type { WebhookEndpointRow } from '../../../../storage/tables.js'
import { EndpointLimitError, findEndpoint, listEndpoints } from '../../../../storage/webhook-endpoint-repository.js'
import { listDeliveries } from '../../../../storage/webhook-repository.js'
import { checkWebhookUrl } from '../../../../webhooks/webhook-url.js'
import type { PagePlugin } from '../../../dashboard-context.js'
import { DashboardError } from '../../../dashboard-error.js'
import { type FieldErrors, type FormBody, list, text } from '../../../forms.js'
import { sendPage } from '../../../send-page.js'
import { waitOf } from '../../../times.js'
import { endpointBody, endpointsBody, secretBody } from './views.js'
import { partner, partnerMay } from '../../../page-roles.js'

/** The 429 page of an endpoint that had its test events and resends for the minute. */
function tooManySends(retryAfterMs: number): never {
  const wait = waitOf(retryAfterMs)
  throw new DashboardError(
    429,
    'Too many sends',
    `This endpoint was sent ${MANUAL_SENDS.limit} test events and resends in the last minute, the most allowed. ` +
      `Try again in ${wait.text}.`,
    { 'retry-after': String(wait.seconds) },
  )
}

function endpointLimit(limit: number): string {
  return (
    `Endpoint limit reached: your organisation already has ${limit} enabled endpoints in this mode, the most ` +
    'allowed. Disable one you no longer use, then add or enable this one.'
  )
}

export const webhookPages: PagePlugin = async (app, { context }) => {
  const { storage, clock } = context
  const db = storage.db

  /** The organisations whose endpoints the partner manages: live for their organisation, test for the sandbox. */
  function owners(request: FastifyRequest): { live: string | null; test: string } {
    const account = request.account!
    return { live: account.organisation_id, test: account.sandbox_organisation_id! }
  }

  async function ownEndpoint(request: FastifyRequest): Promise<WebhookEndpointRow> {
    const { id } = request.params as { id: string }
    const { live, test } = owners(request)
    const endpoint = await findEndpoint(db, id, live === null ? [test] : [live, test])
    if (endpoint === undefined) throw new DashboardError(404, 'Not found', 'There is no such endpoint among yours.')
    return endpoint
  }

  function secretPage(request: FastifyRequest, reply: FastifyReply, endpoint: WebhookEndpointRow, secret: string) {
    return sendPage(request, reply, 'Signing secret', secretBody(endpoint, secret), 200, '/dashboard/partner/webhooks')
  }

  async function listPage(
    request: FastifyRequest,
    reply: FastifyReply,
    values: FormBody = {},
    errors: FieldErrors = {},
    status = 200,
  ) {
    const { live, test } = owners(request)
    const endpoints = await listEndpoints(db, live === null ? [test] : [live, test])
    const form = { values, errors, liveAllowed: live !== null, allowLoopback: context.webhookAllowLoopback }
    const body = endpointsBody(request, endpoints, form)
    return sendPage(request, reply, 'Webhooks', body, status, '/dashboard/partner/webhooks')
  }

  app.get('/webhooks', partner, (request, reply) => listPage(request, reply))

  app.post('/webhooks', partnerMay('webhooks.manage'), async (request, reply) => {
    const values = (request.body ?? {}) as FormBody
    const { live, test } = owners(request)
    const errors: FieldErrors = {}
    const url = checkWebhookUrl(text(values, 'url'), context.webhookAllowLoopback)
    if (!url.ok) errors.url = url.reason
    const mode = text(values, 'mode') as KeyMode
    if (mode !== 'test' && !(mode === 'live' && live !== null)) errors.mode = 'Choose test, or live once approved.'
    const events = list(values, 'events').filter(isWebhookEvent)
    if (events.length === 0) errors.events = 'Choose at least one event.'
    if (!url.ok || Object.keys(errors).length > 0) return listPage(request, reply, values, errors, 400)
    const created = await addEndpoint(
      db,
      {
        organisationId: mode === 'live' ? live! : test,
        mode,
        url: url.url.toString(),
        events,
        createdBy: request.account!.id,
        maxEnabled: context.maxWebhookEndpoints,
      },
      clock.now(),
    ).catch((error: unknown) => {
      if (error instanceof EndpointLimitError) return error
      throw error
    })
    if (created instanceof EndpointLimitError)
      return listPage(request, reply, values, { url: endpointLimit(created.limit) }, 409)
    return secretPage(request, reply, created.endpoint, created.secret)
  })

  app.get('/webhooks/:id', partner, async (request, reply) => {
    const endpoint = await ownEndpoint(request)
    const deliveries = await listDeliveries(db, endpoint.id, 100)
    const body = endpointBody(request, endpoint, deliveries)
    return sendPage(request, reply, 'Webhook endpoint', body, 200, '/dashboard/partner/webhooks')
  })

  app.post('/webhooks/:id/test', partnerMay('webhooks.manage'), async (request, reply) => {
    const endpoint = await ownEndpoint(request)
    const sent = await sendTestEvent(db, endpoint, clock.now())
    if (sent.outcome === 'limited') tooManySends(sent.retryAfterMs)
    return reply.redirect(`/dashboard/partner/webhooks/${endpoint.id}`, 303)
  })

  app.post('/webhooks/:id/roll', partnerMay('webhooks.manage'), async (request, reply) => {
    const endpoint = await ownEndpoint(request)
    return secretPage(request, reply, endpoint, await rollEndpointSecret(db, endpoint, clock.now()))
  })

  for (const [path, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    app.post(`/webhooks/:id/${path}`, partnerMay('webhooks.manage'), async (request, reply) => {
      const endpoint = await ownEndpoint(request)
      try {
        await enableEndpoint(db, endpoint, enabled, context.maxWebhookEndpoints)
      } catch (error) {
        if (!(error instanceof EndpointLimitError)) throw error
        throw new DashboardError(409, 'Endpoint limit reached', endpointLimit(error.limit))
      }
      return reply.redirect(`/dashboard/partner/webhooks/${endpoint.id}`, 303)
    })
  }

  app.post('/webhooks/:id/deliveries/:delivery/resend', partnerMay('webhooks.manage'), async (request, reply) => {
    const endpoint = await ownEndpoint(request)
    const { delivery } = request.params as { delivery: string }
    const resent = await resendDelivery(db, delivery, endpoint, clock.now())
    if (resent.outcome === 'not_found')
      throw new DashboardError(404, 'Not found', 'There is no such delivery for this endpoint.')
    if (resent.outcome === 'limited') tooManySends(resent.retryAfterMs)
    if (resent.outcome === 'refused') {
      throw new DashboardError(
        403,
        'Not sent: access ended',
        `This event is about a student, and ${REFUSAL_REASONS[resent.refusal]}: it was not sent again. ` +
          'Events about students go only to organisations that may see them now.',
      )
    }
    return reply.redirect(`/dashboard/partner/webhooks/${endpoint.id}`, 303)
  })
}
