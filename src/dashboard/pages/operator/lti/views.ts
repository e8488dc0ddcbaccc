/**
 * The operator's LTI page: the platforms registered, the registration URLs made (a new one for an
 * organisation, revoking one), the values a platform registered by hand asks for, and the tool's
 * signing key with its rotation.
 */
import type { FastifyRequest } from 'fastify'
import type { ToolUrls } from '../../../../domain/lti-tool-configuration.js'
import type {
  RegistrationLinkSummary,
  RegistrationSummary,
} from '../../../../storage/lti-registration-list-repository.js'
import type { RetiredToolKey } from '../../../../storage/lti-tool-key-repository.js'
import type { SchoolSummary } from '../../../../storage/school-repository.js'
import type { OrganisationRow } from '../../../../storage/tables.js'
import { type Html, html } from '../../../html.js'
import { csrfField } from '../../../layout.js'
import { utcMinute } from '../../../times.js'
import { registrationsTable } from '../../../views/lti-registrations.js'
import { ACTION_HEADING, scrollTable, stateBadge, tableRow } from '../../../views/table.js'

export const LTI_PATH = '/dashboard/operator/lti'
export const registrationPath = (id: string) => `${LTI_PATH}/registrations/${id}`

/** What a redirect back to an LTI page announces, by a fixed code (never reflected text). */
const NOTICES: Record<string, string> = {
  'link-revoked': 'The registration URL is revoked: platforms opening it are refused.',
  'key-rotated':
    'The tool key is rotated. Every instance signs with the new key within a minute; the old key stays published ' +
    'for 7 days.',
  registered: 'The platform is registered, pending: activate it when its deployments are right.',
  activated: 'The registration is active: its launches are accepted.',
  deactivated: 'The registration is inactive: its launches are refused and no score is sent to it.',
  'deployment-added': 'The deployment is added.',
  'deployment-removed': 'The deployment is removed: its launches are refused.',
}

export function ltiNotice(request: FastifyRequest): Html {
  const notice = NOTICES[String((request.query as Record<string, unknown>).notice ?? '')]
  return notice === undefined ? html`` : html`<p class="notice" role="status">${notice}</p>`
}

export interface LtiOverview {
  registrations: readonly RegistrationSummary[]
  links: readonly RegistrationLinkSummary[]
  organisations: readonly OrganisationRow[]
  schools: readonly SchoolSummary[]
  urls: ToolUrls
  key: { current: string; retired: readonly RetiredToolKey[] }
}

function linksTable(request: FastifyRequest, links: readonly RegistrationLinkSummary[]): Html {
  if (links.length === 0) return html`<p class="empty">No registration URL made yet.</p>`
  return scrollTable({
    caption: 'Registration URLs',
    headings: ['Organisation', 'School', 'Made (UTC)', 'By', 'Registrations', 'State', ACTION_HEADING],
    rows: links.map(({ link, organisationName, schoolName, registrations }) =>
      tableRow([
        organisationName,
        schoolName ?? '',
        utcMinute(link.created_at),
        link.created_by ?? '',
        String(registrations),
        link.revoked_at === null ? stateBadge('active') : html`${stateBadge('revoked')} ${utcMinute(link.revoked_at)}`,
        link.revoked_at === null
          ? html`<form method="post" action="${LTI_PATH}/links/${link.id}/revoke">${csrfField(request)}
<button type="submit" class="secondary">Revoke<span class="visually-hidden"> the URL of ${organisationName}</span>
</button></form>`
          : '',
      ]),
    ),
  })
}

export function newLinkForm(
  request: FastifyRequest,
  organisations: readonly OrganisationRow[],
  schools: readonly SchoolSummary[],
  error?: string,
): Html {
  const invalid = error === undefined ? '' : html` aria-invalid="true" aria-describedby="organisation-error"`
  return html`<form method="post" action="${LTI_PATH}/links" class="stack">
  ${csrfField(request)}
  ${error === undefined ? '' : html`<p class="field-error" id="organisation-error">${error}</p>`}
  <div><label for="organisation">Organisation that will own the students</label>
  <select id="organisation" name="organisation"${invalid}>${organisations.map(
    (o) => html`<option value="${o.id}">${o.name}</option>`,
  )}</select></div>
  <div><label for="school">School its students attend (optional)</label>
  <p class="hint" id="school-hint">The school's shares then follow the students its launches make.</p>
  <select id="school" name="school" aria-describedby="school-hint"><option value="">None</option>${schools.map(
    (s) => html`<option value="${s.id}">${s.name}</option>`,
  )}</select></div>
  <div><button type="submit">Make a registration URL</button></div>
</form>`
}

function toolKeySection(key: LtiOverview['key']): Html {
  return html`<h2 id="tool-key">Tool key</h2>
<p>The tool signs its client assertions and deep-linking answers with one RS256 key, published with its key id at
the key set URL below. Rotating it publishes a new key; the old one stays published for 7 days, so tokens it signed
just before still verify.</p>
<ul>
  <li>In use: <code>${key.current}</code></li>
  ${key.retired.map((r) => html`<li>Retired, published until ${utcMinute(r.until)}: <code>${r.jwk.kid}</code></li>`)}
</ul>
<p><a href="${LTI_PATH}/key/rotate">Rotate the tool key</a></p>`
}

function toolValues(urls: ToolUrls): Html {
  const row = (label: string, value: string) =>
    html`<tr><th scope="row">${label}</th><td><code>${value}</code></td></tr>`
  return html`<h2 id="tool-values">What a platform asks for</h2>
<p>For a platform registered by hand (docs/lti.md walks through Canvas, Moodle and Schoology):</p>
<div class="table-wrap" tabindex="0" role="region" aria-label="Tool values"><table>
<caption class="visually-hidden">The tool's values</caption>
<tbody>
${row('Login initiation URL (OpenID Connect)', urls.login)}
${row('Redirect URI / launch URL / target link URI', urls.launch)}
${row('Key set URL (JWKS)', urls.jwks)}
${row('Domain', urls.domain)}
${row('Configuration JSON (Dynamic Registration format)', `${urls.base}/lti/configuration.json`)}
${row('Canvas developer key JSON (Enter URL)', `${urls.base}/lti/configuration/canvas.json`)}
</tbody></table></div>`
}

export function ltiBody(request: FastifyRequest, overview: LtiOverview, linkError?: string): Html {
  return html`${ltiNotice(request)}
<p>Learning platforms (Canvas, Moodle, Schoology and others) that launch students into lessons. A platform
registers itself through an organisation's registration URL, or you register it by hand; either way it waits,
pending, until you activate it here. Its students belong to the organisation, first names only.</p>
<h2 id="registrations">Registrations</h2>
${registrationsTable(overview.registrations, { link: registrationPath })}
<p><a href="${LTI_PATH}/registrations/new">Register a platform by hand</a></p>
<h2 id="links">Registration URLs</h2>
<p>Give a district the URL made here; their administrator pastes it into the platform's dynamic registration. It is
shown once (only its hash is kept). What registers through it waits for you to activate it.</p>
${linksTable(request, overview.links)}
<h3>New registration URL</h3>
${
  overview.organisations.length === 0
    ? html`<p class="empty">No partner organisation yet.</p>`
    : newLinkForm(request, overview.organisations, overview.schools, linkError)
}
${toolValues(overview.urls)}
${toolKeySection(overview.key)}`
}

/** The new registration URL, shown this once. */
export function newLinkBody(url: string, organisationName: string, schoolName: string | null): Html {
  return html`<p>The registration URL for <strong>${organisationName}</strong>${
    schoolName === null ? '' : html` (students attend ${schoolName})`
  } is below. It is shown this once: copy it now and give it to the district's platform administrator.</p>
<p><label for="registration-url">Registration URL</label>
<input id="registration-url" class="secret" readonly value="${url}"></p>
<p>In Canvas it goes into a developer key's dynamic registration ("LTI Registration" URL); in Moodle into
<em>Tool URL</em>, then <em>Add LTI Advantage</em>. What registers waits here, pending, for you to activate it.</p>
<p><a href="${LTI_PATH}">Back to LTI</a></p>`
}
