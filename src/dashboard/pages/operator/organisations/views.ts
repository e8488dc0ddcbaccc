/** The organisations list, and one organisation's page: status, agreements and their ends, shares, keys. */
import type { FastifyRequest } from 'fastify'
import type { AgreementEnd } from '../../../../storage/agreement-end-repository.js'
import type { AgreementRow, ApiKeyRow, OrganisationRow } from '../../../../storage/tables.js'
import { type Html, html } from '../../../html.js'
import { csrfField } from '../../../layout.js'
import { studentAccessSummary } from '../../../views/agreement-state.js'
import { keysTable } from '../../../views/keys-table.js'
import { scrollTable, stateBadge, tableRow } from '../../../views/table.js'
import { type AgreementForm, agreementForm, agreementsTable, recordedNotice } from '../agreements/views.js'
import { type ShareForm, type SharesData, sharedStudentsSection } from '../shares/views.js'

/** A refused form of the organisation's page, sent back to be corrected. */
export interface OrganisationForms {
  agreement?: AgreementForm
  share?: ShareForm
}
import { endsSection } from '../ended-agreements/views.js'

export function organisationsBody(
  organisations: readonly OrganisationRow[],
  agreements: readonly AgreementRow[],
  now: number,
): Html {
  if (organisations.length === 0)
    return html`<p class="empty">No organisation yet. Approving an application creates one.</p>`
  return scrollTable({
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
}

export interface OrganisationData {
  agreements: readonly AgreementRow[]
  keys: readonly ApiKeyRow[]
  accounts: readonly { email: string }[]
  /** Its ended agreements with data to delete (storage/agreement-end-repository.ts). */
  ends: readonly AgreementEnd[]
  now: number
  /** What a new agreement's disposition period starts at. */
  dispositionDays: number
  shares: SharesData
}

export function organisationBody(
  request: FastifyRequest,
  o: OrganisationRow,
  { agreements, keys, accounts, ends, now, dispositionDays, shares }: OrganisationData,
  forms: OrganisationForms,
): Html {
  const base = `/dashboard/operator/organisations/${o.id}`
  const active = o.status === 'active'
  return html`${recordedNotice(agreements, (request.query as Record<string, unknown>).recorded, now)}
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
    : agreementsTable(request, base, agreements, now)
}
${agreementForm(request, base, forms.agreement, dispositionDays)}
${endsSection(ends)}
${sharedStudentsSection(request, o, shares, forms.share)}
<h2>Keys</h2>
${keysTable(keys, now, { revoke: (row) => `${base}/keys/${row.id}/revoke` }, 'Keys of this organisation')}`
}
