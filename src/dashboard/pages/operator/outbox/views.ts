/**
 * The Outbox page: whether mail is sent or kept here, the test-message form, and the messages
 * newest first, each with its state (and a "Send again" button when interrupted or failed),
 * attempts, last error and its text body to read.
 */
import type { FastifyRequest } from 'fastify'
import { ONE_TIME_LINK_KINDS } from '../../../../cases/mail.js'
import type { MailRow, MailState } from '../../../../storage/tables.js'
import { errorSummary, type FieldErrors, field } from '../../../forms.js'
import { type Html, html } from '../../../html.js'
import { csrfField } from '../../../layout.js'
import { utcMinute } from '../../../times.js'
import { scrollTable, tableRow } from '../../../views/table.js'

export const OUTBOX_PATH = '/dashboard/operator/outbox'

export interface OutboxView {
  page: { rows: readonly MailRow[]; next: number | null }
  /** The `before` of this page, when it is not the first. */
  before: number | undefined
  counts: Partial<Record<MailState, number>>
  /** SMTP_URL is set. */
  sending: boolean
  /** The test-message form's value and error, when it was refused. */
  form?: { to: string; errors: FieldErrors }
  /** The message just queued or queued again, for the notice. */
  done?: { id: number; again: boolean }
}

const STATES: readonly MailState[] = ['pending', 'sending', 'sent', 'failed', 'interrupted']

/** What each state means beside its badge. */
function state(row: MailRow): Html {
  const badge = html`<span class="state ${row.state}">${row.state}</span>`
  if (row.state === 'pending' && row.next_attempt_at !== null && row.attempts > 0)
    return html`${badge} next attempt at ${utcMinute(row.next_attempt_at)}`
  if (row.state === 'sent' && row.sent_at !== null) return html`${badge} ${utcMinute(row.sent_at)}`
  return badge
}

function sendAgain(request: FastifyRequest, row: MailRow): Html {
  if (row.state !== 'interrupted' && row.state !== 'failed') return html``
  return html`<form method="post" action="${OUTBOX_PATH}/${row.id}/send-again" class="send-again">${csrfField(request)}
<button type="submit">Send again<span class="visually-hidden"> (message ${row.id})</span></button></form>`
}

function message(row: MailRow, sending: boolean): Html {
  // Once mail is really sent, a sign-in or reset link is its recipient's alone (cases/mail.ts).
  if (sending && ONE_TIME_LINK_KINDS.has(row.kind))
    return html`<span class="hint">Not shown: it carries a one-time link for its recipient.</span>`
  return html`<details><summary>Read<span class="visually-hidden"> message ${row.id}</span></summary>
<pre class="mail-body">${row.text_body}</pre></details>`
}

function notice(view: OutboxView): Html {
  if (view.done === undefined) return html``
  const what = view.done.again ? `Message ${view.done.id} was queued again` : `Test message ${view.done.id} was queued`
  const next = view.sending ? 'it is sent within seconds; its state is below.' : 'it stays here, below.'
  return html`<p class="notice" role="status">${what}: ${next}</p>`
}

export function outboxBody(request: FastifyRequest, view: OutboxView): Html {
  const { rows, next } = view.page
  const counted = STATES.filter((s) => (view.counts[s] ?? 0) > 0).map((s) => `${view.counts[s]} ${s}`)
  const errors = view.form?.errors ?? {}
  const to = view.form?.to ?? ''
  const none = view.before === undefined ? 'No message yet.' : 'No older message.'
  const table = scrollTable({
    caption: 'Messages, newest first',
    headings: ['Queued (UTC)', 'Kind', 'To', 'Subject', 'State', 'Attempts', 'Last error', 'Message'],
    rows: rows.map((row) =>
      tableRow([
        utcMinute(row.created_at),
        row.kind,
        row.recipient,
        row.subject,
        html`${state(row)}${sendAgain(request, row)}`,
        String(row.attempts),
        row.last_error ?? '',
        message(row, view.sending),
      ]),
    ),
  })
  return html`${notice(view)}${
    view.sending
      ? html`<p>Mail is sent through the SMTP server <code>SMTP_URL</code> names. A message that was interrupted
may have arrived: it is never sent again unless you send it again.</p>`
      : html`<p><code>SMTP_URL</code> is unset: nothing is sent. Messages stay here, and the log names each one with
its link when it is queued.</p>`
  }
<p>${counted.length === 0 ? 'The outbox is empty.' : `In the outbox: ${counted.join(', ')}.`}</p>
<h2>Send a test message</h2>
${errorSummary(errors)}
<form method="post" action="${OUTBOX_PATH}/test" class="stack" novalidate>
  ${csrfField(request)}
  ${field('to', 'To', { type: 'email', value: to, required: true, errors, hint: 'One e-mail address.' })}
  <div><button type="submit">Send a test message</button></div>
</form>
<h2>Messages</h2>
${rows.length === 0 ? html`<p class="empty">${none}</p>` : table}
${next === null ? '' : html`<p><a rel="next" href="${OUTBOX_PATH}?before=${next}">Older messages</a></p>`}`
}
