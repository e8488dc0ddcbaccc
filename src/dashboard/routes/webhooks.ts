/**
 * A partner's webhook endpoints: register one (live endpoints hear about the organisation's real
 * students, test ones about the sandbox's), see its signing secret once, roll it, disable or
 * enable it, read its delivery log, resend a delivery and send a test event.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { KeyMode } from '../../domain/api-key.js'
import {
  isWebhookEvent,
  MANUAL_SENDS,
  REFUSAL_REASONS,
  type SubscribableEvent,
  WEBHOOK_EVENTS,
} from '../../domain/webhook-events.js'
import type { WebhookEndpointRow } from '../../storage/tables.js'
import {
  createEndpoint,
  EndpointLimitError,
  findEndpoint,
  listEndpoints,
  rollSecret,
  setEndpointEnabled,
} from '../../storage/webhook-endpoint-repository.js'
import { listDeliveries, resendDelivery, sendTestEvent } from '../../storage/webhook-repository.js'
import { checkWebhookUrl } from '../../webhooks/webhook-url.js'
import type { DashboardContext } from '../dashboard-context.js'
import { DashboardError } from '../dashboard-error.js'
import { errorSummary, type FieldErrors, type FormBody, field, list, text } from '../forms.js'
import { type Html, html } from '../html.js'
import { csrfField } from '../layout.js'
import { sendPage } from '../send-page.js'
import { utcMinute, waitOf } from '../times.js'
import { deliveryState } from '../views/delivery-state.js'
import { scrollTable, stateBadge, tableRow } from '../views/table.js'

const EVENT_LABELS: Record<SubscribableEvent, string> = {
  'student.tier_changed': 'A student’s tier changed (student.tier_changed)',
  'progress.updated': 'A student’s progress changed (progress.updated)',
  'catalog.published': 'A new catalog was published (catalog.published)',
}

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

export function webhookRoutes(app: FastifyInstance, context: DashboardContext): void {
  const { storage, clock } = context
  const db = storage.db
  const partner = { config: { dashboard: 'partner' as const } }

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
    const body = html`<p>The signing secret of <code>${endpoint.url}</code>. It is shown only now: keep it in your
secret store. Verify each delivery's <code>webhook-signature</code> with it, as the
<a href="https://www.standardwebhooks.com">Standard Webhooks</a> libraries do.</p>
<p><code class="secret">${secret}</code></p>
<p><a href="/dashboard/partner/webhooks/${endpoint.id}">Continue to the endpoint</a></p>`
    return sendPage(request, reply, 'Signing secret', body, 200, '/dashboard/partner/webhooks')
  }

  function endpointForm(request: FastifyRequest, values: FormBody, errors: FieldErrors, liveAllowed: boolean): Html {
    const chosen = list(values, 'events')
    const mode = text(values, 'mode') || 'test'
    const afterApproval = html` <span class="hint">(after approval)</span>`
    return html`<form method="post" action="/dashboard/partner/webhooks" class="stack" novalidate>
  ${csrfField(request)}
  ${errorSummary(errors)}
  ${field('url', 'Endpoint URL', {
    type: 'url',
    value: text(values, 'url'),
    hint: 'https:// and a public host. Deliveries are POSTs of JSON, signed per Standard Webhooks.',
    required: true,
    errors,
  })}
  <fieldset><legend>Mode</legend>
    <label class="check"><input type="radio" name="mode" value="test"${mode === 'test' ? html` checked` : ''}>
      Test: events about your sandbox's made-up students</label>
    <label class="check"><input type="radio" name="mode" value="live"${mode === 'live' ? html` checked` : ''}${
      liveAllowed ? '' : html` disabled`
    }>
      Live: events about your organisation's students${liveAllowed ? '' : afterApproval}</label>
  </fieldset>
  <fieldset><legend>Events</legend>
  ${WEBHOOK_EVENTS.map(
    (event) =>
      html`<label class="check"><input type="checkbox" name="events" value="${event}"${
        chosen.includes(event) ? html` checked` : ''
      }> ${EVENT_LABELS[event]}</label>`,
  )}
  ${errors.events === undefined ? '' : html`<p class="error" id="events-error">${errors.events}</p>`}
  </fieldset>
  <div><button type="submit">Add endpoint</button></div>
</form>`
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
    const rows = endpoints.map((endpoint) =>
      tableRow([
        html`<a href="/dashboard/partner/webhooks/${endpoint.id}"><code>${endpoint.url}</code></a>`,
        endpoint.mode,
        endpoint.events.split(' ').map((event) => html`<code>${event}</code> `),
        stateBadge(endpoint.status === 'enabled' ? 'active' : 'suspended'),
        endpoint.disabled_reason ??
          (endpoint.failing_since === null ? '' : `failing since ${utcMinute(endpoint.failing_since)}`),
      ]),
    )
    const body = html`<p>Endpoints hear about changes as they are committed, so you need not poll. A delivery that
fails is retried for more than a day; an endpoint that fails for three days is disabled.</p>
${
  endpoints.length === 0
    ? html`<p class="empty">No endpoints yet.</p>`
    : scrollTable({ caption: 'Webhook endpoints', headings: ['URL', 'Mode', 'Events', 'State', 'Notice'], rows })
}
<h2>Add an endpoint</h2>
${endpointForm(request, values, errors, live !== null)}`
    return sendPage(request, reply, 'Webhooks', body, status, '/dashboard/partner/webhooks')
  }

  app.get('/partner/webhooks', partner, (request, reply) => listPage(request, reply))

  app.post('/partner/webhooks', partner, async (request, reply) => {
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
    const created = await createEndpoint(
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

  app.get('/partner/webhooks/:id', partner, async (request, reply) => {
    const endpoint = await ownEndpoint(request)
    const deliveries = await listDeliveries(db, endpoint.id, 100)
    const action = (path: string, label: string) =>
      html`<form method="post" action="/dashboard/partner/webhooks/${endpoint.id}/${path}" class="inline">${csrfField(
        request,
      )}<button type="submit">${label}</button></form>`
    const rows = deliveries.map((delivery) =>
      tableRow([
        utcMinute(delivery.created_at),
        html`<code>${delivery.event_type}</code>`,
        deliveryState(delivery),
        String(delivery.attempts),
        delivery.last_status === null ? (delivery.last_error ?? '') : String(delivery.last_status),
        delivery.last_latency_ms === null ? '' : `${delivery.last_latency_ms} ms`,
        html`<code>${delivery.id}</code>`,
        action(`deliveries/${delivery.id}/resend`, 'Resend'),
      ]),
    )
    const body = html`<p><code>${endpoint.url}</code>, ${endpoint.mode} mode: ${stateBadge(
      endpoint.status === 'enabled' ? 'active' : 'suspended',
    )} ${endpoint.disabled_reason ?? ''}</p>
<div class="row">${action('test', 'Send test event')} ${action('roll', 'Roll signing secret')} ${
      endpoint.status === 'enabled' ? action('disable', 'Disable') : action('enable', 'Enable')
    }</div>
<h2>Deliveries</h2>
${
  deliveries.length === 0
    ? html`<p class="empty">Nothing sent yet.</p>`
    : scrollTable({
        caption: 'Deliveries, newest first',
        headings: ['Created (UTC)', 'Event', 'State', 'Attempts', 'Last answer', 'Latency', 'webhook-id', ''],
        rows,
      })
}`
    return sendPage(request, reply, 'Webhook endpoint', body, 200, '/dashboard/partner/webhooks')
  })

  app.post('/partner/webhooks/:id/test', partner, async (request, reply) => {
    const endpoint = await ownEndpoint(request)
    const sent = await sendTestEvent(db, endpoint, clock.now())
    if (sent.outcome === 'limited') tooManySends(sent.retryAfterMs)
    return reply.redirect(`/dashboard/partner/webhooks/${endpoint.id}`, 303)
  })

  app.post('/partner/webhooks/:id/roll', partner, async (request, reply) => {
    const endpoint = await ownEndpoint(request)
    return secretPage(request, reply, endpoint, await rollSecret(db, endpoint, clock.now()))
  })

  for (const [path, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    app.post(`/partner/webhooks/:id/${path}`, partner, async (request, reply) => {
      const endpoint = await ownEndpoint(request)
      try {
        await setEndpointEnabled(db, endpoint, enabled, context.maxWebhookEndpoints)
      } catch (error) {
        if (!(error instanceof EndpointLimitError)) throw error
        throw new DashboardError(409, 'Endpoint limit reached', endpointLimit(error.limit))
      }
      return reply.redirect(`/dashboard/partner/webhooks/${endpoint.id}`, 303)
    })
  }

  app.post('/partner/webhooks/:id/deliveries/:delivery/resend', partner, async (request, reply) => {
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
