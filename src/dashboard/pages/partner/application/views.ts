/**
 * The access application's HTML: its state in a sentence (also on the overview), the application
 * as sent, and the form, sent back with what was typed and what is wrong with it.
 */
import type { FastifyRequest } from 'fastify'
import { SCOPES } from '../../../../domain/scopes.js'
import type { ApplicationRow } from '../../../../storage/tables.js'
import { errorSummary, field, type FieldErrors, textarea } from '../../../forms.js'
import { type Html, html } from '../../../html.js'
import { csrfField } from '../../../layout.js'
import { applicationRequestRows } from '../../../views/application-request.js'
import { stateBadge } from '../../../views/table.js'
import { SCOPE_LABELS } from '../scope-labels.js'

export function applicationSummary(application: ApplicationRow | undefined): Html {
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

/** An application waiting or approved: what was sent. */
export function applicationDetails(latest: ApplicationRow): Html {
  return html`${applicationSummary(latest)}
<dl>
${applicationRequestRows(latest)}
</dl>`
}

/** Instead of the form, until the account's address is verified: live access needs a proven address. */
export function verifyFirst(request: FastifyRequest, email: string): Html {
  return html`<p>Before you apply, verify your e-mail address <strong>${email}</strong>: use the link we mailed you
when you signed up. Your sandbox and test keys work meanwhile.</p>
<form method="post" action="/dashboard/account/verify" class="stack">${csrfField(request)}
  <div><button type="submit">Send a new verification link</button></div>
</form>
<p>Wrong address? Change it on your <a href="/dashboard/account">Account page</a>.</p>`
}

export function applicationForm(
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
