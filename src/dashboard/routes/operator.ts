/**
 * The operator's pages: the review queue, organisations (agreements, suspension, keys), the
 * disclosure log with filters and CSV export, and the audit log. Every change made here is
 * written to the audit log in the same transaction.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { nextOrganisationStatus, type OrganisationStatus } from '../../domain/application-state.js'
import { isScope, SCOPES } from '../../domain/scopes.js'
import { NotFoundError } from '../../domain/errors.js'
import {
  endAgreements,
  listAgreements,
  listApiKeys,
  listOrganisationsByName,
  organisationById,
  recordAgreement,
  revokeApiKey,
  setOrganisationStatus,
} from '../../storage/access-repository.js'
import { accountEmails, accountsOf } from '../../storage/account-repository.js'
import { decideApplication, listApplications } from '../../storage/application-repository.js'
import { listAudit, recordAudit } from '../../storage/audit-repository.js'
import type { AgreementRow, ApplicationRow, OrganisationRow } from '../../storage/tables.js'
import {
  DISCLOSURE_ACTIONS,
  type DisclosureAction,
  type DisclosureFilter,
  listDisclosures,
  pageDisclosures,
} from '../../storage/disclosure-log.js'
import { inTransaction } from '../../storage/transaction.js'
import type { DashboardContext } from '../dashboard-context.js'
import { errorSummary, field, type FieldErrors, type FormBody, list, text, textarea } from '../forms.js'
import { type Html, html } from '../html.js'
import { csrfField } from '../layout.js'
import { sendPage } from '../send-page.js'
import { utcDay, utcMinute } from '../times.js'
import { agreementBadge, agreementState, studentAccessSummary } from '../views/agreement-state.js'
import { keysTable } from '../views/keys-table.js'
import { revokeConfirmPage } from '../views/revoke-confirm.js'
import { suspendConfirmPage } from '../views/suspend-confirm.js'
import { ACTION_HEADING, scrollTable, stateBadge, tableRow } from '../views/table.js'
import { UUID } from '../../domain/uuid.js'

function csvCell(value: string): string {
  // Quote every cell; neutralise spreadsheet formulas (CSV injection).
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value
  return `"${safe.replace(/"/g, '""')}"`
}

export function operatorRoutes(app: FastifyInstance, context: DashboardContext): void {
  const { storage, clock } = context
  const db = storage.db
  const operator = { config: { dashboard: 'operator' as const } }
  // Student ids (the disclosure log; the audit log's export filters): opened only from this dashboard.
  const studentPage = { config: { dashboard: 'operator' as const, studentData: true as const } }
  const actor = (request: FastifyRequest) => `account:${request.account!.email}`

  async function organisation(id: string): Promise<OrganisationRow> {
    if (!UUID.test(id)) throw new NotFoundError(`no organisation ${id}`)
    const row = await organisationById(db, id, 'partner')
    if (row === undefined) throw new NotFoundError(`no organisation ${id}`)
    return row
  }

  app.get('/operator', operator, (_request, reply) => reply.redirect('/dashboard/operator/applications', 303))

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

  /** The review queue; `errors` (by field name) come back from a refused decision form. */
  async function applicationsPage(
    request: FastifyRequest,
    reply: FastifyReply,
    errors: FieldErrors = {},
    status = 200,
  ): Promise<FastifyReply> {
    const all = await listApplications(db)
    const queue = all.filter((a) => a.state === 'submitted')
    const decided = all.filter((a) => a.state !== 'submitted').reverse()
    const accounts = await accountEmails(db)
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
  <dt>Website</dt><dd>${a.website}</dd>
  <dt>Contact</dt><dd>${a.contact_name} (${a.contact_email})</dd>
  <dt>Access asked for</dt><dd>Catalog${a.requested_scopes
    .split(' ')
    .filter(Boolean)
    .map((scope) => html`, <code>${scope}</code>`)}</dd>
  <dt>Intended use</dt><dd>${a.intended_use}</dd>
</dl>
${decisionForms(request, a, errors)}
</section>`,
      )
}
<h2>Decided</h2>
${decided.length === 0 ? html`<p class="empty">Nothing decided yet.</p>` : decidedTable}`
    return sendPage(
      request,
      reply,
      'Applications',
      html`${errorSummary(errors)}${body}`,
      status,
      '/dashboard/operator/applications',
    )
  }

  app.get('/operator/applications', operator, async (request, reply) => applicationsPage(request, reply))

  app.post('/operator/applications/:id/approve', operator, async (request, reply) => {
    const { id } = request.params as { id: string }
    if (!UUID.test(id)) throw new NotFoundError(id)
    const scopes = list(request.body as FormBody, 'scopes').filter(isScope)
    await decideApplication(db, id, { event: 'approve', grantedScopes: scopes }, actor(request), clock.now())
    return reply.redirect('/dashboard/operator/applications?notice=approved', 303)
  })

  app.post('/operator/applications/:id/reject', operator, async (request, reply) => {
    const { id } = request.params as { id: string }
    if (!UUID.test(id)) throw new NotFoundError(id)
    const reason = text(request.body as FormBody, `reason-${id}`)
    if (reason === '')
      return applicationsPage(
        request,
        reply,
        { [`reason-${id}`]: 'Write the reason for the rejection: the partner sees it.' },
        400,
      )
    await decideApplication(db, id, { event: 'reject', reason: reason.slice(0, 2000) }, actor(request), clock.now())
    return reply.redirect('/dashboard/operator/applications?notice=rejected', 303)
  })

  app.get('/operator/organisations', operator, async (request, reply) => {
    const organisations = await listOrganisationsByName(db, 'partner')
    const agreements = await listAgreements(db)
    const now = clock.now()
    const body =
      organisations.length === 0
        ? html`<p class="empty">No organisation yet. Approving an application creates one.</p>`
        : scrollTable({
            headings: ['Organisation', 'Status', 'Granted', 'Agreement'],
            rows: organisations.map((o) =>
              tableRow([
                html`<a href="/dashboard/operator/organisations/${o.id}">${o.name}</a>`,
                stateBadge(o.status),
                o.allowed_scopes === '' ? 'catalog' : o.allowed_scopes,
                studentAccessSummary(
                  agreements.filter((a) => a.organisation_id === o.id),
                  now,
                ),
              ]),
            ),
          })
    return sendPage(request, reply, 'Organisations', body, 200, '/dashboard/operator/organisations')
  })

  /** What the last recorded agreement means, from the data (never from text in the address). */
  function recordedNotice(agreements: readonly AgreementRow[], recordedId: unknown, now: number): Html {
    const recorded = agreements.find((a) => a.id === recordedId)
    if (recorded === undefined) return html``
    const { state, label } = agreementState(recorded, now)
    const anyInForce = agreements.some((a) => agreementState(a, now).state === 'active')
    const meanwhile = anyInForce
      ? 'Another agreement is in force: student endpoints work meanwhile.'
      : 'Student endpoints stay refused.'
    const effect =
      state === 'active'
        ? 'It is in force: student endpoints work for this organisation.'
        : `It is not in force (it ${label}), so it does not open student endpoints` +
          `${state === 'pending' ? ' before that day' : ''}. ${meanwhile}`
    return html`<p class="notice" role="status">Agreement ${recorded.document_ref} was recorded. ${effect}</p>`
  }

  interface AgreementForm {
    values: { signed: string; expires: string; document: string }
    errors: FieldErrors
  }

  async function organisationPage(
    request: FastifyRequest,
    reply: FastifyReply,
    o: OrganisationRow,
    form?: AgreementForm,
    status = 200,
  ): Promise<FastifyReply> {
    const [agreements, keys, accounts] = await Promise.all([
      listAgreements(db, o.id),
      listApiKeys(db, o.id),
      accountsOf(db, o.id),
    ])
    const now = clock.now()
    const base = `/dashboard/operator/organisations/${o.id}`
    const errors = form?.errors ?? {}
    const active = o.status === 'active'
    const endButton = (a: AgreementRow) =>
      html`<button type="submit" class="danger" aria-label="End agreement ${a.document_ref}">End</button>`
    const endForm = (a: AgreementRow) =>
      html`<form method="post" action="${base}/agreements/${a.id}/end">${csrfField(request)}${endButton(a)}</form>`
    const agreementsTable = scrollTable({
      headings: ['Document', 'Signed', 'Expires', 'State', ACTION_HEADING],
      rows: agreements.map((a) => {
        const { state } = agreementState(a, now)
        return tableRow([
          a.document_ref,
          utcDay(a.signed_at),
          a.expires_at === null ? 'never' : utcDay(a.expires_at),
          agreementBadge(a, now),
          state === 'active' || state === 'pending' ? endForm(a) : '',
        ])
      }),
    })
    const body = html`${recordedNotice(agreements, (request.query as Record<string, unknown>).recorded, now)}
<p>Status: ${stateBadge(o.status)}. Granted: ${o.allowed_scopes === '' ? 'catalog only' : o.allowed_scopes}.
Partner accounts: ${accounts.map((a) => a.email).join(', ') || 'none'}.
Data-sharing agreement: ${studentAccessSummary(agreements, now)}.</p>
${
  active
    ? html`<p><a class="button danger" href="${base}/suspend">Suspend organisation (refuse all its keys)\u2026</a>
</p>`
    : html`<form method="post" action="${base}/reinstate">
  ${csrfField(request)}
  <button type="submit">Reinstate organisation</button>
</form>`
}
<h2>Data-sharing agreements</h2>
${
  agreements.length === 0
    ? html`<p class="empty">No agreement recorded. Student endpoints are refused until one is in force.</p>`
    : agreementsTable
}
<details${form === undefined ? '' : html` open`}><summary>Record a signed agreement</summary>
${errorSummary(errors)}
<form method="post" action="${base}/agreements" class="stack" novalidate>
  ${csrfField(request)}
  ${field('signed', 'Signed on', {
    type: 'date',
    required: true,
    value: form?.values.signed ?? '',
    errors,
    hint: 'The agreement is in force from 00:00 UTC that day.',
  })}
  ${field('expires', 'Expires on (optional)', {
    type: 'date',
    value: form?.values.expires ?? '',
    errors,
    hint: 'At 00:00 UTC that day; after the signing date.',
  })}
  ${field('document', 'Document reference', {
    required: true,
    value: form?.values.document ?? '',
    errors,
    hint: 'Where the signed document is kept, e.g. DSA-2026-014.',
  })}
  <div><button type="submit">Record agreement</button></div>
</form></details>
<h2>Keys</h2>
${keysTable(keys, now, (row) => `${base}/keys/${row.id}/revoke`, 'Keys of this organisation')}`
    return sendPage(request, reply, o.name, body, status, '/dashboard/operator/organisations')
  }

  app.get('/operator/organisations/:id', operator, async (request, reply) =>
    organisationPage(request, reply, await organisation((request.params as { id: string }).id)),
  )

  app.post('/operator/organisations/:id/agreements', operator, async (request, reply) => {
    const o = await organisation((request.params as { id: string }).id)
    const form = request.body as FormBody
    const values = { signed: text(form, 'signed'), expires: text(form, 'expires'), document: text(form, 'document') }
    const date = (value: string) =>
      /^\d{4}-\d{2}-\d{2}$/.test(value) ? Date.parse(`${value}T00:00:00.000Z`) : Number.NaN
    const signed = date(values.signed)
    const expires = values.expires === '' ? null : date(values.expires)
    const errors: FieldErrors = {}
    if (Number.isNaN(signed)) errors.signed = 'Enter the date the agreement was signed.'
    if (expires !== null && Number.isNaN(expires))
      errors.expires = 'Enter the expiry date as a date, or leave it empty.'
    else if (expires !== null && !Number.isNaN(signed) && expires <= signed)
      errors.expires = 'The expiry date must be after the signing date.'
    if (values.document === '') errors.document = 'Enter the document reference: where the signed agreement is kept.'
    else if (values.document.length > 200)
      errors.document = 'Shorten the document reference to 200 characters or fewer.'
    if (Object.keys(errors).length > 0) return organisationPage(request, reply, o, { values, errors }, 400)
    const row = await inTransaction(db, async (trx) => {
      const row = await recordAgreement(
        trx,
        { organisationId: o.id, signedAt: signed, expiresAt: expires, documentRef: values.document },
        clock.now(),
      )
      await recordAudit(
        trx,
        {
          actor: actor(request),
          action: 'agreement.record',
          target: `organisation:${o.id}`,
          detail: {
            organisation: o.name,
            agreementId: row.id,
            document: row.document_ref,
            signed: row.signed_at,
            expires: row.expires_at,
          },
        },
        clock.now(),
      )
      return row
    })
    return reply.redirect(`/dashboard/operator/organisations/${o.id}?recorded=${row.id}`, 303)
  })

  app.post('/operator/organisations/:id/agreements/:agreementId/end', operator, async (request, reply) => {
    const o = await organisation((request.params as { id: string }).id)
    const { agreementId } = request.params as { agreementId: string }
    const agreement = (await listAgreements(db, o.id)).find((a) => a.id === agreementId)
    if (agreement === undefined) throw new NotFoundError(agreementId)
    await inTransaction(db, async (trx) => {
      await endAgreements(trx, { agreementId }, clock.now())
      await recordAudit(
        trx,
        {
          actor: actor(request),
          action: 'agreement.end',
          target: `organisation:${o.id}`,
          detail: { organisation: o.name, agreementId, document: agreement.document_ref },
        },
        clock.now(),
      )
    })
    return reply.redirect(`/dashboard/operator/organisations/${o.id}?notice=agreement-ended`, 303)
  })

  app.get('/operator/organisations/:id/suspend', operator, async (request, reply) => {
    const o = await organisation((request.params as { id: string }).id)
    return suspendConfirmPage(request, reply, o, await listApiKeys(db, o.id), clock.now())
  })

  for (const event of ['suspend', 'reinstate'] as const) {
    app.post(`/operator/organisations/:id/${event}`, operator, async (request, reply) => {
      const o = await organisation((request.params as { id: string }).id)
      const status: OrganisationStatus = nextOrganisationStatus(o.status, event)
      await inTransaction(db, async (trx) => {
        await setOrganisationStatus(trx, o.id, status)
        await recordAudit(
          trx,
          {
            actor: actor(request),
            action: `organisation.${event}`,
            target: `organisation:${o.id}`,
            detail: { organisation: o.name },
          },
          clock.now(),
        )
      })
      return reply.redirect(
        `/dashboard/operator/organisations/${o.id}?notice=${event === 'suspend' ? 'suspended' : 'reinstated'}`,
        303,
      )
    })
  }

  app.get('/operator/organisations/:id/keys/:keyId/revoke', operator, async (request, reply) => {
    const o = await organisation((request.params as { id: string }).id)
    const { keyId } = request.params as { keyId: string }
    const key = (await listApiKeys(db, o.id)).find((k) => k.id === keyId)
    if (key === undefined) throw new NotFoundError(keyId)
    const base = `/dashboard/operator/organisations/${o.id}`
    return revokeConfirmPage(request, reply, key, clock.now(), {
      action: `${base}/keys/${key.id}/revoke`,
      back: base,
      organisation: o.name,
    })
  })

  app.post('/operator/organisations/:id/keys/:keyId/revoke', operator, async (request, reply) => {
    const o = await organisation((request.params as { id: string }).id)
    const { keyId } = request.params as { keyId: string }
    const key = (await listApiKeys(db, o.id)).find((k) => k.id === keyId)
    if (key === undefined) throw new NotFoundError(keyId)
    await inTransaction(db, async (trx) => {
      await revokeApiKey(trx, key.id, clock.now())
      await recordAudit(
        trx,
        {
          actor: actor(request),
          action: 'key.revoke',
          target: `key:${key.id}`,
          detail: { organisation: o.name, prefix: key.display_prefix, name: key.name },
        },
        clock.now(),
      )
    })
    return reply.redirect(`/dashboard/operator/organisations/${o.id}?notice=key-revoked`, 303)
  })

  /** Rows per page of the disclosure log, and at most in one CSV export (newest first). */
  const DISCLOSURE_PAGE = 200
  const CSV_EXPORT_LIMIT = 100_000

  /** The disclosure filter from the query string; bad values are ignored with a message. */
  function disclosureFilter(query: Record<string, unknown>): {
    filter: DisclosureFilter
    values: Record<string, string>
    problems: string[]
    before: number | undefined
  } {
    const values: Record<string, string> = {}
    for (const name of ['student', 'organisation', 'key', 'action', 'since', 'until']) {
      const value = query[name]
      values[name] = typeof value === 'string' ? value.trim() : ''
    }
    const filter: DisclosureFilter = {}
    const problems: string[] = []
    const cursor =
      typeof query.before === 'string' && /^\d{1,15}$/.test(query.before) ? Number(query.before) : undefined
    if (values.student)
      UUID.test(values.student.toLowerCase())
        ? (filter.studentId = values.student.toLowerCase())
        : problems.push('The student must be a UUID.')
    if (values.organisation)
      UUID.test(values.organisation)
        ? (filter.organisationId = values.organisation)
        : problems.push('Choose an organisation from the list.')
    if (values.key)
      UUID.test(values.key)
        ? (filter.keyId = values.key)
        : problems.push('The key must be a key id (a UUID, as the keys table shows on the organisation page).')
    if (values.action)
      (DISCLOSURE_ACTIONS as readonly string[]).includes(values.action)
        ? (filter.action = values.action as DisclosureAction)
        : problems.push('Unknown action.')
    for (const [name, bound] of [
      ['since', 'since'],
      ['until', 'until'],
    ] as const) {
      if (!values[name]) continue
      const at = Date.parse(`${values[name]}T00:00:00.000Z`)
      if (Number.isNaN(at)) problems.push(`The ${name} date must be a date.`)
      else filter[bound] = name === 'until' ? at + 86_400_000 : at
    }
    return { filter, values, problems, before: cursor }
  }

  app.get('/operator/disclosures', studentPage, async (request, reply) => {
    const { filter, values, problems, before } = disclosureFilter(request.query as Record<string, unknown>)
    const [{ rows, next }, organisations] = await Promise.all([
      pageDisclosures(db, filter, DISCLOSURE_PAGE, before),
      listOrganisationsByName(db),
    ])
    const names = new Map(organisations.map((o) => [o.id, o.name]))
    const query = new URLSearchParams(Object.entries(values).filter(([, v]) => v !== '')).toString()
    const chosen = (value: string, option: string) => (value === option ? html` selected` : '')
    const organisationOptions = organisations.map(
      (o) => html`<option value="${o.id}"${chosen(values.organisation ?? '', o.id)}>${o.name}</option>`,
    )
    const actionOptions = DISCLOSURE_ACTIONS.map(
      (a) => html`<option value="${a}"${chosen(values.action ?? '', a)}>${a}</option>`,
    )
    const problemList =
      problems.length > 0
        ? html`<div class="error-summary" role="alert"><ul>${problems.map((p) => html`<li>${p}</li>`)}</ul></div>`
        : ''
    const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`
    const csvHref = `/dashboard/operator/disclosures.csv${query ? `?${query}` : ''}`
    const olderHref = `/dashboard/operator/disclosures?${new URLSearchParams([
      ...Object.entries(values).filter(([, v]) => v !== ''),
      ['before', String(next)],
    ]).toString()}`
    const table = scrollTable({
      headings: ['When (UTC)', 'Organisation', 'Key', 'Student', 'Action', 'Outcome', 'Request id'],
      rows: rows.map((row) =>
        tableRow([
          row.at.replace('T', ' ').slice(0, 19),
          names.get(row.organisation_id) ?? row.organisation_id,
          html`<code>${row.key_id}</code>`,
          html`<code>${row.student_id}</code>`,
          row.action,
          row.outcome,
          html`<code>${row.request_id}</code>`,
        ]),
      ),
    })
    const body = html`<form method="get" action="/dashboard/operator/disclosures" class="stack">
  ${problemList}
  ${field('student', 'Student id', { value: values.student })}
  <div><label for="organisation">Organisation</label>
    <select id="organisation" name="organisation"><option value="">Any</option>${organisationOptions}</select></div>
  ${field('key', 'Key id', { value: values.key })}
  <div><label for="action">Action</label>
    <select id="action" name="action"><option value="">Any</option>${actionOptions}</select></div>
  ${field('since', 'From (inclusive)', { type: 'date', value: values.since })}
  ${field('until', 'To (inclusive)', { type: 'date', value: values.until })}
  <div class="row"><button type="submit">Filter</button> <a href="${csvHref}">Export these as CSV</a></div>
</form>
<p>${plural(rows.length, 'record')}${before === undefined ? ', newest first' : ' older than the previous page'}.</p>
${rows.length === 0 ? html`<p class="empty">No disclosure matches.</p>` : table}
${next === null ? '' : html`<p><a rel="next" href="${olderHref}">Older records</a></p>`}`
    return sendPage(request, reply, 'Disclosure log', body, 200, '/dashboard/operator/disclosures')
  })

  app.get('/operator/disclosures.csv', studentPage, async (request, reply) => {
    const { filter } = disclosureFilter(request.query as Record<string, unknown>)
    const rows = await listDisclosures(db, { ...filter, limit: CSV_EXPORT_LIMIT })
    const lines = [['at', 'organisation_id', 'key_id', 'student_id', 'action', 'outcome', 'request_id'].join(',')]
    for (const row of rows)
      lines.push(
        [row.at, row.organisation_id, row.key_id, row.student_id, row.action, row.outcome, row.request_id]
          .map(csvCell)
          .join(','),
      )
    await recordAudit(
      db,
      {
        actor: actor(request),
        action: 'disclosures.export',
        target: 'disclosures',
        detail: { rows: rows.length, filter },
      },
      clock.now(),
    )
    return reply
      .type('text/csv; charset=utf-8')
      .header(
        'content-disposition',
        `attachment; filename="disclosures-${new Date(clock.now()).toISOString().slice(0, 10)}.csv"`,
      )
      .send(`${lines.join('\r\n')}\r\n`)
  })

  app.get('/operator/audit', studentPage, async (request, reply) => {
    const rows = await listAudit(db, 500)
    const body =
      rows.length === 0
        ? html`<p class="empty">No operator action yet.</p>`
        : html`<p>Every operator action, newest first.</p>${scrollTable({
            headings: ['When (UTC)', 'Who', 'What', 'Target', 'Details'],
            rows: rows.map((row) =>
              tableRow([
                row.at.replace('T', ' ').slice(0, 19),
                row.actor,
                row.action,
                html`<code>${row.target}</code>`,
                html`<code>${row.detail}</code>`,
              ]),
            ),
          })}`
    return sendPage(request, reply, 'Audit log', body, 200, '/dashboard/operator/audit')
  })
}
