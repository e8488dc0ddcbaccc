/**
 * One LTI registration's page: what the platform registered, its state with activation and
 * deactivation (asked first, as suspending an organisation is), its deployments (add, remove),
 * the registration URL it came through, and the sections other LTI pages add below.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { RegistrationSummary } from '../../../../storage/lti-registration-list-repository.js'
import type { LtiRegistrationLinkRow } from '../../../../storage/tables.js'
import type { FieldErrors } from '../../../forms.js'
import { errorSummary, field } from '../../../forms.js'
import { type Html, html } from '../../../html.js'
import { csrfField } from '../../../layout.js'
import { sendPage } from '../../../send-page.js'
import { utcMinute } from '../../../times.js'
import { ACTION_HEADING, scrollTable, stateBadge, tableRow } from '../../../views/table.js'
import { LTI_PATH, ltiNotice, registrationPath } from './views.js'

export interface RegistrationPageData {
  summary: RegistrationSummary
  link: LtiRegistrationLinkRow | undefined
  /** Sections rendered after the deployments, in order (each with its own h2). */
  sections: readonly Html[]
  deploymentForm?: { value: string; errors: FieldErrors }
}

function details(summary: RegistrationSummary, link: LtiRegistrationLinkRow | undefined): Html {
  const r = summary.registration
  const item = (term: string, value: unknown) => html`<dt>${term}</dt><dd>${value}</dd>`
  const code = (value: string | null) =>
    value === null ? html`<span class="empty">none</span>` : html`<code>${value}</code>`
  const organisation =
    summary.schoolName === null
      ? summary.organisationName
      : `${summary.organisationName} (students attend ${summary.schoolName})`
  const how = r.method === 'dynamic' ? 'dynamically' : 'by hand'
  const registered = `${utcMinute(r.created_at)}, ${how}, by ${r.created_by ?? 'unknown'}`
  const linkState =
    link === undefined || link.revoked_at === null ? 'in force' : `revoked ${utcMinute(link.revoked_at)}`
  const madeThrough =
    link === undefined
      ? 'none (registered by hand)'
      : html`made ${utcMinute(link.created_at)} by ${link.created_by ?? 'unknown'}, ${linkState}
(<a href="${LTI_PATH}#links">registration URLs</a>)`
  const activated = r.activated_at === null ? 'never' : `${utcMinute(r.activated_at)} by ${r.activated_by ?? 'unknown'}`
  return html`<dl>
${item('State', stateBadge(r.status))}
${item('Organisation', organisation)}
${item('Registered', registered)}
${item('Registration URL', madeThrough)}
${item('Activated', activated)}
${r.deactivated_at === null ? '' : item('Deactivated', utcMinute(r.deactivated_at))}
${item('Product', r.product ?? 'not said')}
${item('Issuer', code(r.issuer))}
${item('Client id', code(r.client_id))}
${item('Authentication request URL', code(r.auth_login_url))}
${item('Access token URL', code(r.token_url))}
${item('Token audience', code(r.token_audience))}
${item('Key set URL', code(r.jwks_uri))}
${item('Scopes granted', r.scopes === '' ? 'none' : html`${r.scopes.split(' ').map((s) => html`<code>${s}</code> `)}`)}
</dl>`
}

function stateActions(request: FastifyRequest, summary: RegistrationSummary): Html {
  const r = summary.registration
  const base = registrationPath(r.id)
  const noDeployment =
    summary.deployments.length === 0
      ? html`<p class="hint">It has no deployment yet: launches are refused until one is added below (Canvas shows the
deployment id once the tool is deployed in an account).</p>`
      : ''
  return html`${
    r.status === 'active'
      ? html`<p>Its launches are accepted and its scores sent.</p>`
      : html`${noDeployment}<form method="post" action="${base}/activate" class="row">${csrfField(request)}
<button type="submit">Activate ${r.name}</button></form>`
  }${r.status === 'inactive' ? '' : html`<p><a href="${base}/deactivate">Deactivate ${r.name}</a></p>`}`
}

function deployments(request: FastifyRequest, data: RegistrationPageData): Html {
  const r = data.summary.registration
  const base = registrationPath(r.id)
  const form = data.deploymentForm ?? { value: '', errors: {} }
  const table =
    data.summary.deployments.length === 0
      ? html`<p class="empty">No deployment.</p>`
      : scrollTable({
          caption: 'Deployments',
          headings: ['Deployment id', ACTION_HEADING],
          rows: data.summary.deployments.map((id) =>
            tableRow([
              html`<code>${id}</code>`,
              html`<form method="post" action="${base}/deployments/remove">${csrfField(request)}
<input type="hidden" name="deployment" value="${id}">
<button type="submit" class="secondary">Remove<span class="visually-hidden"> deployment ${id}</span></button></form>`,
            ]),
          ),
        })
  return html`<h2 id="deployments">Deployments</h2>
<p>A launch names its deployment; one this registration does not list is refused.</p>
${table}
${errorSummary(form.errors)}
<form method="post" action="${base}/deployments" class="stack" novalidate>
  ${csrfField(request)}
  ${field('deployment', 'Deployment id', {
    value: form.value,
    errors: form.errors,
    hint: 'As the platform shows it; case matters.',
  })}
  <div><button type="submit">Add the deployment</button></div>
</form>`
}

export function sendRegistrationPage(
  request: FastifyRequest,
  reply: FastifyReply,
  data: RegistrationPageData,
  status = 200,
): FastifyReply {
  const body = html`${ltiNotice(request)}
${details(data.summary, data.link)}
${stateActions(request, data.summary)}
${deployments(request, data)}
${data.sections}
<p><a href="${LTI_PATH}">Back to LTI</a></p>`
  return sendPage(request, reply, data.summary.registration.name, body, status, LTI_PATH)
}

/** Asks before deactivating: its launches stop at once and its scores are no longer sent. */
export function deactivateConfirmPage(request: FastifyRequest, reply: FastifyReply, summary: RegistrationSummary) {
  const r = summary.registration
  const base = registrationPath(r.id)
  if (r.status === 'inactive')
    return sendPage(
      request,
      reply,
      'Inactive already',
      html`<p><strong>${r.name}</strong> is inactive already: nothing to do.</p><p><a href="${base}">Back</a></p>`,
      200,
      LTI_PATH,
    )
  const body = html`<p>You are about to deactivate <strong>${r.name}</strong> (${summary.organisationName}).</p>
<ul>
  <li>Every launch from it is refused from now on: students and teachers in its courses see an error page.</li>
  <li>No score is sent to its gradebook any more.</li>
  <li>Nothing is deleted: its students, their progress and its deployments stay, and activating it again
  resumes it.</li>
</ul>
<form method="post" action="${base}/deactivate" class="row">
  ${csrfField(request)}
  <button type="submit" class="danger">Deactivate ${r.name}</button>
  <a href="${base}">Cancel, keep it ${r.status}</a>
</form>`
  return sendPage(request, reply, `Deactivate ${r.name}?`, body, 200, LTI_PATH)
}
