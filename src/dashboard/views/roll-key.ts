/**
 * Rolling a key: the page names the key, offers how long the old one keeps working (now, for a
 * leaked key; 1 hour, 24 hours, 7 days; or a date) and its form does the roll (the same address
 * takes the POST). The new key is then shown once, as a created key is.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { keyRowState } from '../../domain/api-key.js'
import type { ApiKeyRow } from '../../storage/tables.js'
import { errorSummary, type FieldErrors } from '../forms.js'
import { type Html, html } from '../html.js'
import { csrfField } from '../layout.js'
import { sendPage } from '../send-page.js'
import { utcMinute } from '../times.js'

const CHOICES: readonly { value: string; label: Html }[] = [
  {
    value: 'now',
    label: html`<strong>Now</strong>: the old key stops at once. Choose this if the key leaked.`,
  },
  { value: '1h', label: html`In 1 hour` },
  { value: '24h', label: html`In 24 hours` },
  { value: '7d', label: html`In 7 days` },
  { value: 'date', label: html`On a date (at most 30 days ahead)` },
]

export interface RollForm {
  overlap: string
  date: string
  errors: FieldErrors
}

export function rollKeyPage(
  request: FastifyRequest,
  reply: FastifyReply,
  row: ApiKeyRow,
  now: number,
  where: { action: string; back: string },
  form: RollForm = { overlap: '24h', date: '', errors: {} },
  status = 200,
): FastifyReply {
  const state = keyRowState(row, now)
  const label = html`<strong>${row.name}</strong> (<code>${row.display_prefix}\u2026</code>, ${row.mode})`
  if (state !== 'active' || row.rolled_at !== null) {
    const why = row.rolled_at !== null && state === 'active' ? 'rolled already' : state
    return sendPage(
      request,
      reply,
      'Key cannot be rolled',
      html`<p>The key ${label} is ${why}: only a key in force that was not rolled yet can be rolled.</p>
<p><a href="${where.back}">Back</a></p>`,
      409,
    )
  }
  const dateError = form.errors['roll-date']
  const body = html`${errorSummary(form.errors)}
<p>Rolling the key ${label}, created ${utcMinute(row.created_at)}, makes a new key with the same name and scopes,
shown once on the next page. Put the new key where the old one is used; until the old one stops, both work, and
every answer to the old key carries <code>Deprecation</code> and <code>Sunset</code> headers with its end, so
your logs show which servers still send it.</p>
<form method="post" action="${where.action}" class="stack" novalidate>
  ${csrfField(request)}
  <fieldset><legend>When should the old key stop?</legend>
  ${CHOICES.map(
    (choice) =>
      html`<label class="check"><input type="radio" name="overlap" value="${choice.value}"${
        form.overlap === choice.value ? html` checked` : ''
      }> ${choice.label}</label>`,
  )}
  </fieldset>
  <div>
    <label for="roll-date">Date (UTC), for "on a date"</label>
    ${dateError === undefined ? '' : html`<p class="field-error" id="roll-date-error">${dateError}</p>`}
    <input id="roll-date" name="roll-date" type="date" value="${form.date}"${
      dateError === undefined ? '' : html` aria-invalid="true" aria-describedby="roll-date-error"`
    }>
  </div>
  <div class="row">
    <button type="submit">Roll key ${row.display_prefix}\u2026</button>
    <a href="${where.back}">Cancel</a>
  </div>
</form>`
  return sendPage(request, reply, 'Roll this key', body, status)
}
