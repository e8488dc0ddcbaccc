/**
 * The partner's pages: overview (application state, sandbox, keys), the access application,
 * key creation and revocation, usage per key, and the organisation's own disclosure log.
 * A partner only ever sees their own organisation and their own sandbox.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { isAgreementActive, agreementWindow } from '../../domain/agreements.js'
import { isScope, SCOPES, type Scope } from '../../domain/scopes.js'
import {
  createApiKey,
  findApiKey,
  KeyLimitError,
  listAgreements,
  listApiKeys,
  type NewKey,
  organisationById,
  revokeApiKey,
} from '../../storage/access-repository.js'
import { applicationsOf, submitApplication } from '../../storage/application-repository.js'
import type { AccountRow, ApiKeyRow, ApplicationRow, OrganisationRow } from '../../storage/tables.js'
import { listDisclosures } from '../../storage/disclosure-log.js'
import { sandboxStudents } from '../../storage/sandbox-repository.js'
import { usageOf } from '../../storage/usage-repository.js'
import type { DashboardContext } from '../dashboard-context.js'
import { DashboardError } from '../dashboard-error.js'
import {
  errorSummary,
  field,
  type FieldErrors,
  type FormBody,
  isEmail,
  isWebsite,
  list,
  text,
  textarea,
} from '../forms.js'
import { type Html, html } from '../html.js'
import { csrfField } from '../layout.js'
import { sendPage } from '../send-page.js'
import { keysTable } from '../views/keys-table.js'
import { revokeConfirmPage } from '../views/revoke-confirm.js'
import { scrollTable, stateBadge, tableRow } from '../views/table.js'
import { keyGonePage, newKeyPage, showNewKey } from '../views/new-key.js'
import { lastDays, usageChart } from '../views/usage-chart.js'

const SCOPE_LABELS: Record<Scope, string> = {
  'students:read': 'Student read: a student’s progress (students:read)',
  'students:write': 'Student write: set a student’s tier (students:write)',
}

/** A key form sent back with what was typed and what is wrong with it. */
interface KeyFormState {
  mode: 'test' | 'live'
  values: { name: string; expires: string; scopes: string[] }
  errors: FieldErrors
}

interface PartnerView {
  account: AccountRow
  organisation: OrganisationRow | undefined
  agreementActive: boolean
  sandboxId: string
}

export function partnerRoutes(app: FastifyInstance, context: DashboardContext): void {
  const { storage, clock } = context
  const db = storage.db
  const partner = { config: { dashboard: 'partner' as const } }
  // Student ids (the disclosure log): opened only from this dashboard.
  const studentPage = { config: { dashboard: 'partner' as const, studentData: true as const } }

  async function view(request: FastifyRequest): Promise<PartnerView> {
    const account = request.account!
    const organisation =
      account.organisation_id === null ? undefined : await organisationById(db, account.organisation_id)
    const agreements = organisation === undefined ? [] : await listAgreements(db, organisation.id)
    const agreementActive = isAgreementActive(
      agreements.map((a) => agreementWindow(a.signed_at, a.expires_at, a.ended_at)),
      clock.now(),
    )
    return { account, organisation, agreementActive, sandboxId: account.sandbox_organisation_id! }
  }

  /** Keys the partner may see and revoke: those of their sandbox and of their organisation. */
  async function ownKeys(v: PartnerView): Promise<{ test: ApiKeyRow[]; live: ApiKeyRow[] }> {
    const test = (await listApiKeys(db, v.sandboxId)).filter((key) => key.mode === 'test')
    const live =
      v.organisation === undefined
        ? []
        : (await listApiKeys(db, v.organisation.id)).filter((key) => key.mode === 'live')
    return { test, live }
  }

  function createKeyForm(
    request: FastifyRequest,
    mode: 'test' | 'live',
    allowed: readonly Scope[],
    studentScopesOpen: boolean,
    state?: KeyFormState,
  ): Html {
    const values = state?.mode === mode ? state.values : undefined
    const errors = state?.mode === mode ? state.errors : {}
    return html`<details${values === undefined ? '' : html` open`}><summary>Create a ${mode} key</summary>
${errorSummary(errors)}
<form method="post" action="/dashboard/partner/keys" class="stack" novalidate>
  ${csrfField(request)}
  <input type="hidden" name="mode" value="${mode}">
  ${field(`${mode}-name`, 'Name', {
    value: values?.name ?? '',
    hint: 'Required. What uses the key, to tell keys apart, e.g. "staging server".',
    required: true,
    errors,
  })}
  <fieldset><legend>Scopes (the catalog is always included)</legend>
  ${SCOPES.map((scope) => {
    const enabled = allowed.includes(scope) && (mode === 'test' || studentScopesOpen)
    const checked = enabled && (values === undefined || values.scopes.includes(scope))
    const why = allowed.includes(scope) ? 'needs an active data-sharing agreement' : 'not granted to your organisation'
    const box = html`<input type="checkbox" name="scopes" value="${scope}"${checked ? html` checked` : ''}${
      enabled ? '' : html` disabled`
    }>`
    return html`<label class="check">${box} ${SCOPE_LABELS[scope]}${
      enabled ? '' : html` <span class="hint">(${why})</span>`
    }</label>`
  })}
  </fieldset>
  ${field(`${mode}-expires`, 'Expires on (optional)', {
    type: 'date',
    value: values?.expires ?? '',
    hint: 'At 00:00 UTC that day. Leave empty for a key that does not expire.',
    errors,
  })}
  <div><button type="submit">Create ${mode} key</button></div>
</form></details>`
  }

  function applicationSummary(application: ApplicationRow | undefined): Html {
    if (application === undefined) {
      return html`<p>To reach real students' data, apply for live access.
Review takes 3-5 business days; your sandbox works meanwhile.</p>
<p><a class="button" href="/dashboard/partner/application">Apply for live access</a></p>`
    }
    const submitted = html`<p>Submitted on ${application.created_at.slice(0, 10)}. Review takes 3-5 business days.</p>`
    const rejected = html`<p>Reason: ${application.decision_reason}</p>
<p><a href="/dashboard/partner/application">Apply again</a></p>`
    const state = stateBadge(application.state)
    return html`<p>Application for <strong>${application.organisation_name}</strong>: ${state}</p>
${application.state === 'submitted' ? submitted : ''}
${application.state === 'rejected' ? rejected : ''}`
  }

  async function overview(
    request: FastifyRequest,
    reply: FastifyReply,
    v: PartnerView,
    keyForm?: KeyFormState,
    status = 200,
  ): Promise<FastifyReply> {
    const [applications, keys, students] = await Promise.all([
      applicationsOf(db, v.account.id),
      ownKeys(v),
      sandboxStudents(db, v.sandboxId),
    ])
    const now = clock.now()
    const allowed = (v.organisation?.allowed_scopes ?? '').split(' ').filter(isScope)
    const revokeAction = (row: ApiKeyRow) => `/dashboard/partner/keys/${row.id}/revoke`
    const live = (organisation: OrganisationRow) => {
      const granted = allowed.length === 0 ? 'the catalog' : allowed.map((scope) => html`<code>${scope}</code> `)
      const agreement = v.agreementActive
        ? stateBadge('active')
        : html`<strong>none in force</strong> (student scopes need one; the operator records it)`
      return html`<p>Organisation <strong>${organisation.name}</strong>: ${stateBadge(organisation.status)}.
Granted: ${granted}. Data-sharing agreement: ${agreement}.</p>
<h3>Live keys</h3>
${keysTable(keys.live, now, revokeAction, 'Live keys')}
${
  organisation.status === 'active'
    ? createKeyForm(request, 'live', allowed, v.agreementActive, keyForm)
    : html`<p>Your organisation is suspended: keys cannot be created. Contact the operator.</p>`
}`
    }
    const body = html`<section aria-labelledby="application-heading"><h2 id="application-heading">Live access</h2>
${applicationSummary(applications[0])}
${v.organisation === undefined ? '' : live(v.organisation)}
</section>
<section aria-labelledby="sandbox-heading"><h2 id="sandbox-heading">Sandbox</h2>
<p>Test keys (<code>cur_test_\u2026</code>) reach the real catalog and these made-up students,
never a real child's data, and need no agreement.</p>
${scrollTable({
  caption: 'Sandbox students',
  headings: ['First name', 'Tier', 'Student id'],
  rows: students.map((s) => tableRow([s.first_name, s.tier, html`<code>${s.id}</code>`])),
})}
<h3>Test keys</h3>
${keysTable(keys.test, now, revokeAction, 'Test keys')}
${createKeyForm(request, 'test', SCOPES, true, keyForm)}
</section>`
    return sendPage(request, reply, 'Overview', body, status, '/dashboard/partner')
  }

  app.get('/partner', partner, async (request, reply) => overview(request, reply, await view(request)))

  app.post('/partner/keys', partner, async (request, reply) => {
    const v = await view(request)
    const form = request.body as FormBody
    const mode = text(form, 'mode') === 'live' ? 'live' : 'test'
    const values = {
      name: text(form, `${mode}-name`),
      expires: text(form, `${mode}-expires`),
      scopes: list(form, 'scopes'),
    }
    const scopes = values.scopes.filter(isScope)
    const errors: FieldErrors = {}
    // Required, as GitHub requires a token's note: "live key" told nobody which integration it was.
    if (values.name === '') errors[`${mode}-name`] = 'Give the key a name: what will use it, e.g. "staging server".'
    else if (values.name.length > 80) errors[`${mode}-name`] = 'Shorten the name to 80 characters or fewer.'
    const expiresAt = values.expires === '' ? null : Date.parse(`${values.expires}T00:00:00.000Z`)
    if (expiresAt !== null && (Number.isNaN(expiresAt) || expiresAt <= clock.now())) {
      errors[`${mode}-expires`] = 'Choose a date in the future, or leave it empty for a key that does not expire.'
    }
    let organisationId = v.sandboxId
    if (mode === 'live') {
      if (v.organisation === undefined)
        throw new DashboardError(
          403,
          'No live access yet',
          'Live keys come with an approved application. Use test keys meanwhile.',
        )
      if (v.organisation.status !== 'active')
        throw new DashboardError(
          403,
          'Organisation suspended',
          'Your organisation is suspended; keys cannot be created.',
        )
      const allowed = v.organisation.allowed_scopes.split(' ')
      const refused = scopes.filter((scope) => !allowed.includes(scope) || !v.agreementActive)
      if (refused.length > 0) {
        throw new DashboardError(
          403,
          'Scope not available',
          `Your organisation cannot give a live key ${refused.join(' or ')}: ` +
            'it was not granted, or no data-sharing agreement is in force.',
        )
      }
      organisationId = v.organisation.id
    }
    if (Object.keys(errors).length > 0) return overview(request, reply, v, { mode, values, errors }, 400)
    const spec: NewKey = {
      organisationId,
      name: values.name,
      scopes,
      expiresAt,
      mode,
      createdBy: v.account.id,
      maxActiveKeys: context.maxKeysPerOrganisation,
    }
    const created = await createApiKey(db, spec, clock.now()).catch((error: unknown) => {
      if (error instanceof KeyLimitError) return error
      throw error
    })
    if (created instanceof KeyLimitError) {
      errors[`${mode}-name`] =
        `Key limit reached: you already have ${created.limit} active ${mode} keys, the most allowed. ` +
        'Revoke a key you no longer use, then create this one.'
      return overview(request, reply, v, { mode, values, errors }, 409)
    }
    return showNewKey(request, reply, context, created)
  })

  app.get('/partner/keys/shown/:view', partner, async (request, reply) => {
    const { view: viewToken } = request.params as { view: string }
    const shown = await context.keyViews.open(request, viewToken)
    const row = shown === undefined ? undefined : await findApiKey(db, shown.keyId)
    if (shown === undefined || row === undefined) return keyGonePage(request, reply)
    return newKeyPage(request, reply, context, { ...shown, row, viewToken })
  })

  app.post('/partner/keys/shown/:view/hide', partner, async (request, reply) => {
    await context.keyViews.hide(request, (request.params as { view: string }).view)
    return reply.redirect('/dashboard/partner?notice=key-hidden', 303)
  })

  app.get('/partner/keys/:id/revoke', partner, async (request, reply) => {
    const v = await view(request)
    const { id } = request.params as { id: string }
    const keys = await ownKeys(v)
    const key = [...keys.test, ...keys.live].find((k) => k.id === id)
    if (key === undefined) throw new DashboardError(404, 'Not found', 'There is no such key among yours.')
    return revokeConfirmPage(request, reply, key, clock.now(), {
      action: `/dashboard/partner/keys/${id}/revoke`,
      back: '/dashboard/partner',
    })
  })

  app.post('/partner/keys/:id/revoke', partner, async (request, reply) => {
    const v = await view(request)
    const { id } = request.params as { id: string }
    const keys = await ownKeys(v)
    if (![...keys.test, ...keys.live].some((key) => key.id === id))
      throw new DashboardError(404, 'Not found', 'There is no such key among yours.')
    await revokeApiKey(db, id, clock.now())
    return reply.redirect('/dashboard/partner?notice=key-revoked', 303)
  })

  function applicationForm(
    request: FastifyRequest,
    values: Record<string, string | string[]>,
    errors: FieldErrors = {},
    previous?: ApplicationRow,
  ): Html {
    const requested = (values.scopes as string[] | undefined) ?? []
    const value = (name: string) => String(values[name] ?? '')
    const acknowledgementError = errors.acknowledgement
      ? html`<p class="field-error" id="acknowledgement-error">${errors.acknowledgement}</p>`
      : ''
    const acknowledgementBox = html`<input type="checkbox" id="acknowledgement" name="acknowledgement" value="yes"${
      values.acknowledgement === 'yes' ? html` checked` : ''
    }${errors.acknowledgement ? html` aria-invalid="true" aria-describedby="acknowledgement-error"` : ''}>`
    const rejected =
      previous?.state === 'rejected'
        ? html`<p>Your previous application was rejected: ${previous.decision_reason}</p>`
        : ''
    return html`${errorSummary(errors)}
${rejected}
<p>Review takes <strong>3-5 business days</strong>. Your sandbox and test keys keep working meanwhile;
the review only delays live student data.</p>
<form method="post" action="/dashboard/partner/application" class="stack" novalidate>
  ${csrfField(request)}
  ${field('organisationName', 'Organisation name', {
    value: value('organisationName'),
    required: true,
    errors,
    autocomplete: 'organization',
  })}
  ${field('website', 'Website', {
    type: 'url',
    value: value('website'),
    required: true,
    errors,
    hint: 'e.g. https://www.example.org',
  })}
  ${field('contactName', 'Contact person', {
    value: value('contactName'),
    required: true,
    errors,
    autocomplete: 'name',
  })}
  ${field('contactEmail', 'Contact e-mail address', {
    type: 'email',
    value: value('contactEmail'),
    required: true,
    errors,
    autocomplete: 'email',
  })}
  ${textarea('intendedUse', 'Intended use', {
    value: value('intendedUse'),
    required: true,
    errors,
    hint: 'What your application does with the curriculum and, if you ask for it, with students’ data.',
  })}
  <fieldset aria-describedby="scopes-hint"><legend>Access asked for</legend>
    <p class="hint" id="scopes-hint">The catalog (tiers and lessons) is always included.</p>
    <label class="check"><input type="checkbox" checked disabled> Catalog: tiers and lessons</label>
    ${SCOPES.map((scope) => {
      const checked = requested.includes(scope) ? html` checked` : ''
      const box = html`<input type="checkbox" name="scopes" value="${scope}"${checked}>`
      return html`<label class="check">${box} ${SCOPE_LABELS[scope]}</label>`
    })}
  </fieldset>
  <div>
    ${acknowledgementError}
    <label class="check">${acknowledgementBox} I understand that student access needs a signed data-sharing agreement
with the operator first, and that student endpoints return first names only.</label>
  </div>
  <div><button type="submit">Submit application</button></div>
</form>`
  }

  app.get('/partner/application', partner, async (request, reply) => {
    const v = await view(request)
    const latest = (await applicationsOf(db, v.account.id))[0]
    if (latest !== undefined && latest.state !== 'rejected') {
      const body = html`${applicationSummary(latest)}
<dl>
  <dt>Website</dt><dd>${latest.website}</dd>
  <dt>Contact</dt><dd>${latest.contact_name} (${latest.contact_email})</dd>
  <dt>Access asked for</dt><dd>Catalog${latest.requested_scopes
    .split(' ')
    .filter(Boolean)
    .map((scope) => html`, <code>${scope}</code>`)}</dd>
  <dt>Intended use</dt><dd>${latest.intended_use}</dd>
</dl>`
      return sendPage(request, reply, 'Your application', body, 200, '/dashboard/partner/application')
    }
    return sendPage(
      request,
      reply,
      'Apply for live access',
      applicationForm(request, {}, {}, latest),
      200,
      '/dashboard/partner/application',
    )
  })

  app.post('/partner/application', partner, async (request, reply) => {
    const v = await view(request)
    const form = request.body as FormBody
    const values = {
      organisationName: text(form, 'organisationName'),
      website: text(form, 'website'),
      contactName: text(form, 'contactName'),
      contactEmail: text(form, 'contactEmail'),
      intendedUse: text(form, 'intendedUse'),
      scopes: list(form, 'scopes').filter(isScope),
      acknowledgement: text(form, 'acknowledgement'),
    }
    const errors: FieldErrors = {}
    if (values.organisationName.length < 2 || values.organisationName.length > 120)
      errors.organisationName = 'Enter your organisation’s name (2 to 120 characters).'
    if (!isWebsite(values.website)) errors.website = 'Enter the website address, starting with https://'
    if (values.contactName.length < 2 || values.contactName.length > 120)
      errors.contactName = 'Enter the name of a contact person.'
    if (!isEmail(values.contactEmail)) errors.contactEmail = 'Enter an e-mail address like name@example.org.'
    if (values.intendedUse.length < 20 || values.intendedUse.length > 4000)
      errors.intendedUse = 'Describe the intended use in 20 to 4,000 characters.'
    if (values.scopes.length > 0 && values.acknowledgement !== 'yes') {
      errors.acknowledgement = 'Student access needs a signed data-sharing agreement: confirm that you understand.'
    }
    if (Object.keys(errors).length > 0) {
      const latest = (await applicationsOf(db, v.account.id))[0]
      return sendPage(
        request,
        reply,
        'Apply for live access',
        applicationForm(request, values, errors, latest),
        400,
        '/dashboard/partner/application',
      )
    }
    await submitApplication(db, { accountId: v.account.id, requestedScopes: values.scopes, ...values }, clock.now())
    return reply.redirect('/dashboard/partner/application?notice=application-submitted', 303)
  })

  function keyHeading(key: ApiKeyRow): Html {
    return html`<code>${key.display_prefix}\u2026</code> ${key.name} <span class="hint">(${key.mode})</span>`
  }

  app.get('/partner/usage', partner, async (request, reply) => {
    const v = await view(request)
    const keys = await ownKeys(v)
    const all = [...keys.live, ...keys.test]
    const days = lastDays(clock.now())
    await context.flushUsage()
    const counts = await usageOf(
      db,
      all.map((key) => key.id),
      days[0]!,
    )
    const body =
      all.length === 0
        ? html`<p class="empty">You have no keys yet.</p>`
        : html`<p>Requests per day for each of your keys over the last 30 days (UTC),
and how many were refused with 429 (rate limit).</p>
${all.map(
  (
    key,
    index,
  ) => html`<section class="card" aria-labelledby="usage-${index}"><h2 id="usage-${index}">${keyHeading(key)}</h2>
${usageChart(
  `chart-${index}`,
  `key ${key.display_prefix}`,
  days,
  counts.filter((c) => c.keyId === key.id),
)}</section>`,
)}`
    return sendPage(request, reply, 'Usage', body, 200, '/dashboard/partner/usage')
  })

  app.get('/partner/disclosures', studentPage, async (request, reply) => {
    const v = await view(request)
    const organisations = [v.sandboxId, ...(v.organisation === undefined ? [] : [v.organisation.id])]
    const keys = await ownKeys(v)
    const prefixes = new Map([...keys.live, ...keys.test].map((key) => [key.id, `${key.display_prefix}…`]))
    const rows = (
      await Promise.all(organisations.map((organisationId) => listDisclosures(db, { organisationId, limit: 500 })))
    )
      .flat()
      .sort((a, b) => (a.at < b.at ? 1 : -1))
    const table = scrollTable({
      caption: 'Disclosure log',
      headings: ['When (UTC)', 'Key', 'Student', 'Action', 'Outcome', 'Request id'],
      rows: rows
        .slice(0, 500)
        .map((row) =>
          tableRow([
            row.at.replace('T', ' ').slice(0, 19),
            html`<code>${prefixes.get(row.key_id) ?? row.key_id}</code>`,
            html`<code>${row.student_id}</code>`,
            row.action,
            row.outcome,
            html`<code>${row.request_id}</code>`,
          ]),
        ),
    })
    const body =
      rows.length === 0
        ? html`<p class="empty">No student data has been read or changed with your keys yet.</p>`
        : html`<p>Every read or change of a student's data made with your organisation's keys (and your sandbox's),
newest first. The operator keeps the same record.</p>
${table}`
    return sendPage(request, reply, 'Disclosure log', body, 200, '/dashboard/partner/disclosures')
  })
}
