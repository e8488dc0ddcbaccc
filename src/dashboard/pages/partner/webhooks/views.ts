/**
 * The webhook pages' HTML: the list of endpoints with the form that adds one, an endpoint with
 * its deliveries, and the page that shows a signing secret once.
 */
import type { FastifyRequest } from 'fastify'
import { type SubscribableEvent, WEBHOOK_EVENTS } from '../../../../domain/webhook-events.js'
import type { WebhookDeliveryRow, WebhookEndpointRow } from '../../../../storage/tables.js'
import { errorSummary, type FieldErrors, type FormBody, field, list, text } from '../../../forms.js'
import { type Html, html } from '../../../html.js'
import { csrfField } from '../../../layout.js'
import { utcMinute } from '../../../times.js'
import { scrollTable, stateBadge, tableRow } from '../../../views/table.js'
import { deliveryState } from './delivery-state.js'

const EVENT_LABELS: Record<SubscribableEvent, string> = {
  'student.tier_changed': 'A student’s tier changed (student.tier_changed)',
  'progress.updated': 'A student’s progress changed (progress.updated)',
  'student.unlinked': 'A student was unlinked from your organisation: delete your copy (student.unlinked)',
  'student.deleted': 'A student was erased: delete your copy (student.deleted)',
  'catalog.published': 'A new catalog was published (catalog.published)',
}

export function secretBody(endpoint: WebhookEndpointRow, secret: string): Html {
  return html`<p>The signing secret of <code>${endpoint.url}</code>. It is shown only now: keep it in your
secret store. Verify each delivery's <code>webhook-signature</code> with it, as the
<a href="https://www.standardwebhooks.com">Standard Webhooks</a> libraries do.</p>
<p><code class="secret">${secret}</code></p>
<p><a href="/dashboard/partner/webhooks/${endpoint.id}">Continue to the endpoint</a></p>`
}

/** What the URL field accepts here: loopback endpoints only where WEBHOOK_ALLOW_LOOPBACK lets them through. */
export function endpointUrlHint(allowLoopback: boolean): string {
  const signed = 'Deliveries are POSTs of JSON, signed per Standard Webhooks.'
  return allowLoopback
    ? 'https:// and a public host, or, since this deployment allows loopback endpoints for local testing ' +
        `(WEBHOOK_ALLOW_LOOPBACK), http:// or https:// to localhost, 127.0.0.1 or [::1]. ${signed}`
    : `https:// and a public host: private, loopback and link-local addresses are refused. ${signed}`
}

interface EndpointFormState {
  values: FormBody
  errors: FieldErrors
  liveAllowed: boolean
  allowLoopback: boolean
}

function endpointForm(
  request: FastifyRequest,
  { values, errors, liveAllowed, allowLoopback }: EndpointFormState,
): Html {
  const chosen = list(values, 'events')
  const mode = text(values, 'mode') || 'test'
  const afterApproval = html` <span class="hint">(after approval)</span>`
  return html`<form method="post" action="/dashboard/partner/webhooks" class="stack" novalidate>
  ${csrfField(request)}
  ${errorSummary(errors)}
  ${field('url', 'Endpoint URL', {
    type: 'url',
    value: text(values, 'url'),
    hint: endpointUrlHint(allowLoopback),
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

export function endpointsBody(
  request: FastifyRequest,
  endpoints: readonly WebhookEndpointRow[],
  form: EndpointFormState,
): Html {
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
  return html`<p>Endpoints hear about changes as they are committed, so you need not poll. A delivery that
fails is retried for more than a day; an endpoint that fails for three days is disabled.
<a href="/docs/webhooks">The webhooks chapter</a> lists the events and shows how to verify them.</p>
${
  endpoints.length === 0
    ? html`<p class="empty">No endpoints yet.</p>`
    : scrollTable({ caption: 'Webhook endpoints', headings: ['URL', 'Mode', 'Events', 'State', 'Notice'], rows })
}
<h2>Add an endpoint</h2>
${endpointForm(request, form)}`
}

export function endpointBody(
  request: FastifyRequest,
  endpoint: WebhookEndpointRow,
  deliveries: readonly WebhookDeliveryRow[],
): Html {
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
  return html`<p><code>${endpoint.url}</code>, ${endpoint.mode} mode: ${stateBadge(
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
}
