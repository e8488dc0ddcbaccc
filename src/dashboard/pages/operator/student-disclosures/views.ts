/**
 * The student disclosure report page: who the student is, the downloads, one page of records
 * (oldest first) and the terms of every agreement those records were under.
 */
import { DATA_CATEGORY_LABELS, type DataCategory } from '../../../../domain/agreement-terms.js'
import type { ReportAgreement, ReportRequester, ReportRow } from '../../../../storage/disclosure-report-repository.js'
import { type Html, html } from '../../../html.js'
import { utcMinute } from '../../../times.js'
import { dataText, dispositionText, purposeText, termText } from '../../../views/agreement-terms.js'
import { scrollTable, tableRow } from '../../../views/table.js'

/** Who made the request, as the operator reads it. */
function requester(by: ReportRequester): Html {
  switch (by.kind) {
    case 'key':
      return by.name === null
        ? html`key <code>${by.keyId}</code>`
        : html`key ${by.name} (<code>${by.prefix}\u2026</code>, ${by.mode})`
    case 'dashboard':
      return html`dashboard: ${by.email ?? by.accountId}`
    case 'webhook':
      return html`webhook: ${by.url ?? by.endpointId}${by.event === null ? '' : html` (${by.event})`}`
    case 'lti':
      return html`LTI platform: ${by.platform ?? by.registrationId}${by.issuer === null ? '' : html` (${by.issuer})`}`
  }
}

/** The data a record handed over, and what of it the agreement did not list. */
function handedOver(row: ReportRow): Html | string {
  if (row.data.length === 0) return 'none'
  const labels = (categories: readonly DataCategory[]) => categories.map((c) => DATA_CATEGORY_LABELS[c]).join(', ')
  return row.beyondAgreement.length === 0
    ? labels(row.data)
    : html`${labels(row.data)} <strong>(${labels(row.beyondAgreement)}: not in the agreement)</strong>`
}

/** An agreement as the shared views read it. */
function terms(a: ReportAgreement) {
  return {
    signed_at: a.signedAt,
    expires_at: a.expiresAt,
    ended_at: a.endedAt,
    purpose: a.purpose,
    data_categories: a.dataCategories.join(' '),
    disposition_days: a.dispositionDays,
    document_ref: a.documentRef,
  }
}

export function studentReportBody(
  student: { id: string; firstName: string | null },
  rows: readonly ReportRow[],
  page: { next: number | null; continued: boolean },
): Html {
  const base = `/dashboard/operator/students/${student.id}/disclosures`
  const who =
    student.firstName === null
      ? html`No student with id <code>${student.id}</code> is stored now; the records that name it are
listed all the same.`
      : html`Student <strong>${student.firstName}</strong>, id <code>${student.id}</code>.`
  const agreements = new Map<string, { agreement: ReportAgreement; organisation: string }>()
  for (const row of rows)
    if (row.agreement !== null && !agreements.has(row.agreement.id))
      agreements.set(row.agreement.id, {
        agreement: row.agreement,
        organisation: row.organisation.name ?? row.organisation.id,
      })
  const records = scrollTable({
    caption: 'Disclosure records',
    headings: ['When', 'Organisation', 'By', 'Action', 'Outcome', 'Data handed over', 'Agreement'],
    rows: rows.map((row) =>
      tableRow([
        utcMinute(row.at),
        row.organisation.name ?? row.organisation.id,
        requester(row.by),
        row.action,
        row.outcome,
        handedOver(row),
        row.agreement?.documentRef ?? 'none in force',
      ]),
    ),
  })
  const agreementTable = scrollTable({
    caption: 'Agreements the records were under',
    headings: ['Document', 'Organisation', 'Purpose', 'Data shared', 'Term', 'Disposition'],
    rows: [...agreements.values()].map(({ agreement, organisation }) => {
      const t = terms(agreement)
      return tableRow([t.document_ref, organisation, purposeText(t), dataText(t), termText(t), dispositionText(t)])
    }),
  })
  return html`<p>${who}</p>
<p>Every disclosure of this student's data, oldest first: who asked (organisation, and the key,
dashboard account or webhook), when, what was handed over, and under which data-sharing agreement
(the organisation's agreement in force at that time). Data handed over that the agreement does not
list is marked. The downloads hold every record and the agreements' terms; each download is
recorded in the audit log.</p>
<p class="row"><a class="button" href="${base}.csv" download>Download CSV</a>
<a class="button" href="${base}.json" download>Download JSON</a></p>
<h2>Records</h2>
${
  rows.length === 0
    ? html`<p class="empty">${page.continued ? 'No later records.' : 'No disclosure of this student is recorded.'}</p>`
    : records
}
${page.next === null ? '' : html`<p><a rel="next" href="${base}?after=${page.next}">Later records</a></p>`}
${
  agreements.size === 0
    ? ''
    : html`<h2>Agreements</h2>
<p>The terms of each agreement the records above were under.</p>
${agreementTable}`
}`
}
