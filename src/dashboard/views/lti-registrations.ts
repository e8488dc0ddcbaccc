/**
 * The table of LTI registrations: the operator's LTI page (each platform a link to its page) and
 * an owner's read-only view of their organisation's show the same columns.
 */
import type { RegistrationSummary } from '../../storage/lti-registration-list-repository.js'
import { type Html, html } from '../html.js'
import { utcMinute } from '../times.js'
import { scrollTable, stateBadge, tableRow } from './table.js'

export function registrationsTable(
  summaries: readonly RegistrationSummary[],
  options: { link?: (id: string) => string; organisation?: boolean } = {},
): Html {
  if (summaries.length === 0) return html`<p class="empty">No learning platform is registered.</p>`
  const showOrganisation = options.organisation !== false
  return scrollTable({
    caption: 'LTI registrations',
    headings: [
      'Platform',
      ...(showOrganisation ? ['Organisation'] : []),
      'State',
      'Product',
      'Issuer',
      'Client id',
      'Deployments',
      'Registered (UTC)',
      'Activated (UTC)',
    ],
    rows: summaries.map(({ registration: r, organisationName, schoolName, deployments }) =>
      tableRow([
        options.link === undefined ? r.name : html`<a href="${options.link(r.id)}">${r.name}</a>`,
        ...(showOrganisation ? [schoolName === null ? organisationName : `${organisationName} (${schoolName})`] : []),
        stateBadge(r.status),
        r.product ?? '',
        html`<code>${r.issuer}</code>`,
        html`<code>${r.client_id}</code>`,
        deployments.length === 0
          ? html`<span class="empty">none</span>`
          : html`${deployments.map((d, i) => html`${i > 0 ? ', ' : ''}<code>${d}</code>`)}`,
        `${utcMinute(r.created_at)} (${r.method})`,
        r.activated_at === null ? '' : utcMinute(r.activated_at),
      ]),
    ),
  })
}
