/** The review queue's HTML: each waiting application with its decision forms, then those decided. */
import type { FastifyRequest } from 'fastify'
import { SCOPES } from '../../../../domain/scopes.js'
import type { ApplicationRow } from '../../../../storage/tables.js'
import { errorSummary, type FieldErrors, textarea } from '../../../forms.js'
import { type Html, html } from '../../../html.js'
import { csrfField } from '../../../layout.js'
import { utcMinute } from '../../../times.js'
import { applicationRequestRows } from '../../../views/application-request.js'
import { scrollTable, stateBadge, tableRow } from '../../../views/table.js'

function decisionForms(request: FastifyRequest, application: ApplicationRow, errors: FieldErrors = {}): Html {
  const requested = application.requested_scopes.split(' ')
  return html`<div class="row">
<form method="post" action="/dashboard/operator/applications/${application.id}/approve" class="stack">
  ${csrfField(request)}
  <fieldset><legend>Grant</legend>
    <label class="check"><input type="checkbox" checked disabled> Catalog</label>
    ${SCOPES.map((scope) => {
      const asked = requested.includes(scope)
      const box = html`<input type="checkbox" name="scopes" value="${scope}"${asked ? html` checked` : ''}>`
      return html`<label class="check">${box} <code>${scope}</code>${asked ? ' (asked for)' : ''}</label>`
    })}
  </fieldset>
  <div><button type="submit">Approve</button></div>
</form>
<form method="post" action="/dashboard/operator/applications/${application.id}/reject" class="stack">
  ${csrfField(request)}
  ${textarea(`reason-${application.id}`, 'Reason for rejection', {
    hint: 'The partner sees it.',
    required: true,
    errors,
  })}
  <div><button type="submit" class="danger">Reject</button></div>
</form>
</div>`
}

/** `accounts` names each applicant by e-mail; `errors` (by field name) come back from a refused decision form. */
export function applicationsBody(
  request: FastifyRequest,
  all: readonly ApplicationRow[],
  accounts: ReadonlyMap<string, string>,
  errors: FieldErrors,
): Html {
  const queue = all.filter((a) => a.state === 'submitted')
  const decided = all.filter((a) => a.state !== 'submitted').reverse()
  const decidedTable = scrollTable({
    headings: ['Organisation', 'State', 'Decided', 'By', 'Reason'],
    rows: decided.map((a) =>
      tableRow([
        a.organisation_id
          ? html`<a href="/dashboard/operator/organisations/${a.organisation_id}">${a.organisation_name}</a>`
          : a.organisation_name,
        stateBadge(a.state),
        (a.decided_at ?? '').slice(0, 10),
        a.decided_by,
        a.decision_reason ?? '',
      ]),
    ),
  })
  const body = html`<h2>Waiting for review (${queue.length})</h2>
${
  queue.length === 0
    ? html`<p class="empty">No application is waiting. New ones appear here.</p>`
    : queue.map(
        (a) => html`<section class="card" aria-labelledby="app-${a.id}">
<h3 id="app-${a.id}">${a.organisation_name}</h3>
<dl>
  <dt>Submitted</dt><dd>${utcMinute(a.created_at)} by ${accounts.get(a.account_id) ?? a.account_id}</dd>
${applicationRequestRows(a)}
</dl>
${decisionForms(request, a, errors)}
</section>`,
      )
}
<h2>Decided</h2>
${decided.length === 0 ? html`<p class="empty">Nothing decided yet.</p>` : decidedTable}`
  return html`${errorSummary(errors)}${body}`
}
