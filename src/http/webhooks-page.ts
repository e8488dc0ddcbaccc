/**
 * The webhooks chapter of /docs, rendered from the OpenAPI document's `webhooks` section (the
 * events, their bodies, headers and answers) and from the constants the deliverer runs by (retry
 * schedule, fairness, disabling, secret rolling), so the page cannot disagree with either. Static
 * HTML, no script: served under the same Content-Security-Policy as the reference.
 */
import { escapeHtml } from '../domain/html-escape.js'
import {
  DISABLE_AFTER_FAILING_MS,
  ENDPOINT_CONCURRENCY,
  MANUAL_SENDS,
  MAX_TIMEOUT_BACKOFF_MS,
  RETRY_DELAYS_MS,
  timeoutBackoffMs,
} from '../domain/webhook-events.js'
import { SECRET_PREFIX, SIGNATURE_TOLERANCE_SECONDS } from '../domain/webhook-signature.js'
import { PREVIOUS_SECRET_GRACE_MS } from '../storage/webhook-endpoint-repository.js'
import { INSTANCE_CONCURRENCY } from '../webhooks/webhook-deliverer.js'
import { OPENAPI_PATH } from './api-prefix.js'
import { inlineMarkdown, layout } from './reference-page.js'
import { BY_HAND_JS, BY_HAND_PYTHON, EXAMPLE_RECEIVER_PORT, LIBRARY_JS, LIBRARY_PYTHON } from './webhook-examples.js'

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is read as loose JSON, field by field
type Json = Record<string, any>

/** What the chapter says of this deployment: its settings, not the contract's. */
export interface WebhookDeployment {
  timeoutMs: number
  maxEndpoints: number
  allowLoopback: boolean
}

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

/** A duration as people say it: `5 s`, `30 min`, `27.6 h`, `3 days`. */
export function duration(ms: number): string {
  const round = (value: number) => String(Math.round(value * 10) / 10)
  if (ms >= 2 * DAY && ms % DAY === 0) return `${ms / DAY} days`
  if (ms >= HOUR) return `${round(ms / HOUR)} h`
  if (ms >= MINUTE) return `${round(ms / MINUTE)} min`
  return `${round(ms / SECOND)} s`
}

const code = (text: string) => `<code>${escapeHtml(text)}</code>`
const pre = (id: string, text: string) => `<pre id="${id}"><code>${escapeHtml(text)}</code></pre>`

function table(headings: readonly string[], rows: readonly (readonly string[])[]): string {
  const head = headings.map((heading) => `<th>${heading}</th>`).join('')
  const body = rows.map((cells) => `<tr>${cells.map((cell) => `<td>${cell}</td>`).join('')}</tr>`).join('\n')
  return `<table><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`
}

function typeLabel(schema: Json): string {
  if (schema.$ref !== undefined) {
    const name = escapeHtml(String(schema.$ref).replace('#/components/schemas/', ''))
    return `<a href="/docs#schema-${name}">${name}</a>`
  }
  if (schema.type === 'array') return `array of ${typeLabel(schema.items ?? {})}`
  if (schema.enum !== undefined) return `string (${schema.enum.map((value: string) => code(value)).join(' | ')})`
  return escapeHtml(schema.format === undefined ? schema.type : `${schema.type} (${schema.format})`)
}

/** The component a body's `$ref` names. */
function bodyOf(doc: Json, schema: Json): Json {
  return doc.components.schemas[String(schema.$ref).replace('#/components/schemas/', '')] as Json
}

/** The fields of one event's `data`. */
function dataTable(doc: Json, operation: Json): string {
  const data = bodyOf(doc, operation.requestBody.content['application/json'].schema).properties.data as Json
  const rows = Object.entries(data.properties as Json).map(([name, field]) => [
    code(name),
    typeLabel(field),
    inlineMarkdown(field.description ?? ''),
  ])
  return table(['Field of <code>data</code>', 'Type', 'Meaning'], rows)
}

function eventsSection(doc: Json): string {
  const events = Object.entries(doc.webhooks as Json).map(([event, item]) => {
    const operation = (item as Json).post as Json
    const schema = operation.requestBody.content['application/json'].schema as Json
    const example = bodyOf(doc, schema).examples?.[0]
    return `<section id="event-${escapeHtml(event)}"><h3>${code(event)}: ${escapeHtml(operation.summary)}</h3>
${operation.description === undefined ? '' : `<p>${inlineMarkdown(operation.description)}</p>`}
${dataTable(doc, operation)}
<p>A body (schema ${typeLabel(schema)}):</p>
${example === undefined ? '' : pre(`example-${escapeHtml(event)}`, JSON.stringify(example, null, 2))}</section>`
  })
  return `<section aria-labelledby="events"><h2 id="events">Events</h2>
<p>Each delivery is a <code>POST</code> of one JSON object: <code>type</code> (the event),
<code>timestamp</code> (when it happened, the same on every attempt) and <code>data</code>. It carries ids and the
fields that changed, never a name: read the rest from the API with the ids.</p>
${events.join('\n')}</section>`
}

function headersSection(doc: Json): string {
  const operation = (Object.values(doc.webhooks as Json)[0] as Json).post as Json
  const rows = (operation.parameters as Json[]).map((parameter) => [
    code(parameter.name),
    inlineMarkdown(parameter.description ?? ''),
    parameter.schema.examples === undefined ? code(String(parameter.schema.const)) : code(parameter.schema.examples[0]),
  ])
  return `<section aria-labelledby="headers"><h2 id="headers">Headers</h2>
<p>Every delivery has <code>content-type: application/json</code> and these headers (the first three are
<a href="https://www.standardwebhooks.com">Standard Webhooks</a>'):</p>
${table(['Header', 'Meaning', 'Example'], rows)}</section>`
}

function verifySection(): string {
  return `<section aria-labelledby="verify"><h2 id="verify">Verifying a delivery</h2>
<p>Anyone can POST to your endpoint: act only on deliveries whose signature verifies with the endpoint's signing
secret (<code>${SECRET_PREFIX}...</code>, shown once when you add the endpoint or roll its secret). Verify the body
exactly as it arrived, before parsing it. The examples read the secret from <code>WEBHOOK_SECRET</code> and listen on
port ${EXAMPLE_RECEIVER_PORT}.</p>
<h3>With the Standard Webhooks libraries</h3>
<p>JavaScript (Node), with <a href="https://www.npmjs.com/package/standardwebhooks"><code>standardwebhooks</code></a>
from npm:</p>
${pre('library-js', LIBRARY_JS)}
<p>Python, with <a href="https://pypi.org/project/standardwebhooks/"><code>standardwebhooks</code></a> from PyPI:</p>
${pre('library-python', LIBRARY_PYTHON)}
<h3>By hand</h3>
<ol>
<li>The key is the secret's part after <code>${SECRET_PREFIX}</code>, base64-decoded.</li>
<li>The signed content is <code>&lt;webhook-id&gt;.&lt;webhook-timestamp&gt;.&lt;body&gt;</code>: the two headers and
the raw body, joined by dots.</li>
<li>Its HMAC-SHA256 under the key, base64-encoded, must equal one of the <code>v1,</code> signatures in
<code>webhook-signature</code> (space-separated); compare in constant time.</li>
<li>Refuse a <code>webhook-timestamp</code> more than ${SIGNATURE_TOLERANCE_SECONDS} seconds from your clock, either
way, so a captured delivery cannot be replayed later.</li>
</ol>
${pre('by-hand-js', BY_HAND_JS)}
${pre('by-hand-python', BY_HAND_PYTHON)}
<h3>Rolling the secret</h3>
<p><strong>Roll signing secret</strong> on the endpoint's page shows a new secret once. For the next
${duration(PREVIOUS_SECRET_GRACE_MS)} every delivery carries two signatures, the new secret's first, then the old
one's, so your receiver keeps verifying while you deploy the new secret; after that only the new one signs.</p>
</section>`
}

function answerSection(doc: Json, deployment: WebhookDeployment): string {
  const responses = ((Object.values(doc.webhooks as Json)[0] as Json).post as Json).responses as Json
  const rows = Object.entries(responses).map(([status, response]) => [
    code(status),
    inlineMarkdown((response as Json).description),
  ])
  return `<section aria-labelledby="answer"><h2 id="answer">What to answer</h2>
${table(['Your answer', 'What it means'], rows)}
<ul>
<li>Answer within ${duration(deployment.timeoutMs)}: keep work after the answer (a queue, a job), not before it.</li>
<li>The same delivery can come more than once (a retry after an answer that was lost, a resend): drop a
<code>webhook-id</code> you have already handled.</li>
<li>Deliveries can arrive out of order (two at a time, retries). Go by <code>timestamp</code>, or treat an event as
a cue to read the current state from the API; the change feed (<code>GET /api/v1/progress/changes</code>) is the
ordered record of every change.</li>
</ul></section>`
}

function retriesSection(deployment: WebhookDeployment): string {
  let after = 0
  const rows = [['1', 'at once', '0']]
  for (const [i, delay] of RETRY_DELAYS_MS.entries()) {
    after += delay
    rows.push([String(i + 2), `${duration(delay)} after the previous one failed`, duration(after)])
  }
  const backoffs: string[] = []
  for (let timeouts = 1; ; timeouts++) {
    const wait = timeoutBackoffMs(timeouts, deployment.timeoutMs)
    backoffs.push(duration(wait))
    if (wait >= MAX_TIMEOUT_BACKOFF_MS || timeouts >= 20) break
  }
  return `<section aria-labelledby="retries"><h2 id="retries">Retries, fairness and disabling</h2>
<p>An attempt fails if the answer is not a 2xx within ${duration(deployment.timeoutMs)}. A failed delivery is tried
again on this schedule (Standard Webhooks'), ${RETRY_DELAYS_MS.length + 1} attempts over about
${duration(after)}, so a receiver that is down for a day still gets it; then it is marked failed:</p>
${table(['Attempt', 'When', 'Since the first'], rows)}
<ul>
<li><strong>Disabling.</strong> An endpoint whose every attempt has failed for ${duration(DISABLE_AFTER_FAILING_MS)}
is disabled: nothing more is sent to it, its page says why, and your organisation's owners and developers are told
by mail (a notice each of them may turn off).
Enable it again on its page once it is fixed, and resend what you missed from its delivery log.</li>
<li><strong>Fairness.</strong> An endpoint has at most ${ENDPOINT_CONCURRENCY} attempts under way at once, all
instances of the service together (each instance at most ${INSTANCE_CONCURRENCY}), and free slots go in turns across
organisations, then their endpoints: an endpoint that is slow or never answers delays only its own deliveries. After
an attempt times out the endpoint is sent nothing for a while, longer after each further timeout in a row
(${backoffs.join(', ')}); any answer ends that.</li>
<li><strong>Limits.</strong> An organisation has at most ${deployment.maxEndpoints} enabled endpoints per mode
(test and live); each endpoint at most ${MANUAL_SENDS.limit} test events and resends in any
${duration(MANUAL_SENDS.windowMs)} (429 with <code>Retry-After</code>).</li>
<li><strong>Access.</strong> Test endpoints hear about your sandbox's made-up students, live ones about your
organisation's students while an agreement is in force and the organisation is not suspended. An event about a
student your organisation may no longer see is not sent (its log says why); <code>student.unlinked</code> and
<code>student.deleted</code> are sent whatever the access, since they ask you to delete.</li>
</ul></section>`
}

function localSection(deployment: WebhookDeployment): string {
  const here = deployment.allowLoopback
    ? 'This deployment accepts them: it runs with <code>WEBHOOK_ALLOW_LOOPBACK=true</code>.'
    : 'This deployment does not: it accepts <code>https://</code> URLs of public hosts only.'
  return `<section aria-labelledby="local"><h2 id="local">Testing with a receiver on your own machine</h2>
<p>An endpoint must be an <code>https://</code> URL of a public host: private, loopback and link-local addresses are
refused, when you add it and at every delivery. A deployment whose operator sets
<code>WEBHOOK_ALLOW_LOOPBACK=true</code> (local development only) also accepts <code>http://</code> and
<code>https://</code> URLs of <code>localhost</code>, <code>127.0.0.1</code> and <code>[::1]</code>. ${here}</p>
<ol>
<li>Run the service on your machine with <code>WEBHOOK_ALLOW_LOOPBACK=true npm start</code>; or, against a deployment
that refuses loopback, expose your receiver through an HTTPS tunnel and register the tunnel's public URL.</li>
<li>Add the endpoint <code>http://127.0.0.1:${EXAMPLE_RECEIVER_PORT}/</code> in the dashboard's
<strong>Webhooks</strong>, in test mode, and keep the secret it shows:
<code>export WEBHOOK_SECRET=${SECRET_PREFIX}...</code></li>
<li>Start one of the receivers above in that shell, then press <strong>Send test event</strong> on the endpoint's
page: the receiver prints a <code>webhook.test</code> event and the delivery log says <em>delivered</em>. Enrolling one
of your sandbox students (<code>POST /api/v1/students/$STUDENT_ID/enroll</code> with your test key in
<code>API_KEY</code>) sends a <code>student.tier_changed</code>, if the endpoint hears of it.</li>
</ol></section>`
}

/** The chapter, for any reader. */
export function renderWebhooksChapter(doc: Json, deployment: WebhookDeployment): string {
  const contents = [
    ['events', 'Events'],
    ['headers', 'Headers'],
    ['verify', 'Verifying a delivery'],
    ['answer', 'What to answer'],
    ['retries', 'Retries, fairness and disabling'],
    ['local', 'Testing with a receiver on your own machine'],
  ]
    .map(([id, title]) => `<li><a href="#${id}">${title}</a></li>`)
    .join('')
  return layout(
    `${doc.info?.title ?? 'API'} webhooks`,
    `<header><h1>Webhooks</h1>
<p><a href="/docs">API reference</a> · <a href="${OPENAPI_PATH}">OpenAPI document</a> (its <code>webhooks</code>
section declares every event below) · <a href="/docs/errors">Error catalogue</a></p></header>
<p>Register an endpoint in the <a href="/dashboard">dashboard</a>'s <strong>Webhooks</strong>: its URL, test or live
mode, and the events it hears of. Each change is then POSTed to it as it is committed, signed per
<a href="https://www.standardwebhooks.com">Standard Webhooks</a>, so you need not poll.</p>
<nav aria-label="Contents"><h2>Contents</h2><ul>${contents}</ul></nav>
${eventsSection(doc)}
${headersSection(doc)}
${verifySection()}
${answerSection(doc, deployment)}
${retriesSection(deployment)}
${localSection(deployment)}`,
  )
}
