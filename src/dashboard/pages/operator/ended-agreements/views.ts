/**
 * Ended agreements as the operator sees them, on one organisation's page and for every partner
 * on one page: when each ended, the day its data had to be deleted by, when the links ended, how
 * many students it covers (linked at the end, unlinked or erased earlier), who attested the
 * deletion and when, and its certificate of deletion.
 */
import type { AgreementEnd } from '../../../../storage/agreement-end-repository.js'
import { type Html, html } from '../../../html.js'
import { utcDay } from '../../../times.js'
import { attestationText, coverageText, linksText } from '../../../views/agreement-ends.js'
import { scrollTable, tableRow } from '../../../views/table.js'

export function certificatePath(end: AgreementEnd): string {
  return `/dashboard/operator/organisations/${end.organisationId}/agreements/${end.agreement.id}/certificate.json`
}

function certificateCell(end: AgreementEnd): Html | string {
  if (end.disposition === null) return 'once the links have ended'
  return html`<a href="${certificatePath(end)}" download
aria-label="Download certificate of deletion for agreement ${end.agreement.document_ref}">Download certificate of
deletion</a>`
}

/** `names` adds an organisation column (the page of every partner). */
export function endsTable(ends: readonly AgreementEnd[], names?: ReadonlyMap<string, string>): Html {
  const organisation = (end: AgreementEnd) =>
    html`<a href="/dashboard/operator/organisations/${end.organisationId}">${names!.get(end.organisationId) ?? ''}</a>`
  return scrollTable({
    caption: 'Ended agreements',
    headings: [
      ...(names === undefined ? [] : ['Organisation']),
      'Agreement',
      'Ended',
      'Delete by',
      'Links',
      'Students',
      'Deletion attested',
      'Certificate',
    ],
    rows: ends.map((end) =>
      tableRow([
        ...(names === undefined ? [] : [organisation(end)]),
        end.agreement.document_ref,
        utcDay(end.endedAt),
        utcDay(end.deletionDueAt),
        linksText(end),
        coverageText(end),
        attestationText(end),
        certificateCell(end),
      ]),
    ),
  })
}

/** The section on an organisation's page. */
export function endsSection(ends: readonly AgreementEnd[]): Html {
  return html`<h2>After an agreement ends</h2>
${
  ends.length === 0
    ? html`<p class="empty">No agreement of this organisation has ended with data to delete.</p>`
    : html`<p>Once the disposition period is over, the organisation\u2019s shares and links end and it is sent a
<code>student.unlinked</code> notice for each student; it then attests that it deleted their data.</p>
${endsTable(ends)}`
}`
}

export function endedAgreementsBody(ends: readonly AgreementEnd[], names: ReadonlyMap<string, string>): Html {
  if (ends.length === 0) return html`<p class="empty">No partner\u2019s agreement has ended with data to delete.</p>`
  const waiting = ends.filter((end) => end.attestation === null).length
  return html`<p>${waiting} of ${ends.length} ended agreement${ends.length === 1 ? '' : 's'} still
await${waiting === 1 ? 's' : ''} the partner\u2019s attestation that it deleted the data. A certificate of deletion is
JSON signed by this service\u2019s key, whose public half is at
<a href="/.well-known/curriculum-signing-keys"><code>/.well-known/curriculum-signing-keys</code></a>.</p>
${endsTable(ends, names)}`
}
