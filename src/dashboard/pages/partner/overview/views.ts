/**
 * The overview's HTML: live access (the application's state, then the organisation, its live keys
 * and the form for another), and the sandbox (its made-up students, test keys and the form).
 */
import type { FastifyRequest } from 'fastify'
import { isScope, SCOPES } from '../../../../domain/scopes.js'
import type { AgreementEnd } from '../../../../storage/agreement-end-repository.js'
import type { AgreementRow, ApiKeyRow, ApplicationRow, OrganisationRow } from '../../../../storage/tables.js'
import { type Html, html } from '../../../html.js'
import { utcDay } from '../../../times.js'
import { agreementBadge } from '../../../views/agreement-state.js'
import { deadlineRolesOf, deadlineText, studentsText } from '../../../views/agreement-ends.js'
import { dataText, dispositionText, purposeText, termText } from '../../../views/agreement-terms.js'
import { keysTable } from '../../../views/keys-table.js'
import { scrollTable, stateBadge, tableRow } from '../../../views/table.js'
import { applicationSummary } from '../application/views.js'
import { createKeyForm, type KeyFormState } from '../keys/views.js'
import type { PartnerView } from '../partner-view.js'

export interface OverviewData {
  application: ApplicationRow | undefined
  keys: { test: ApiKeyRow[]; live: ApiKeyRow[] }
  students: readonly { id: string; first_name: string; tier: string }[]
  /** The organisation's ended agreements with data to delete (storage/agreement-end-repository.ts). */
  ends: readonly AgreementEnd[]
  now: number
}

/** Each ended agreement whose deletion is not attested yet: what to delete, by when, and where to attest. */
function deletionNotices(ends: readonly AgreementEnd[]): Html {
  const awaiting = ends.filter((end) => end.attestation === null)
  if (ends.length > 0 && awaiting.length === 0)
    return html`<p>Every ended agreement\u2019s deletion is attested: see <a href="/dashboard/partner/deletion">Data to
delete</a>.</p>`
  return html`${awaiting.map(
    (end) => html`<p class="notice">Agreement ${end.agreement.document_ref} ended on ${utcDay(end.endedAt)}: delete
what your organisation holds about ${studentsText(end.students)} by <strong>${utcDay(end.deletionDueAt)}</strong>,
then attest it on <a href="/dashboard/partner/deletion">Data to delete</a>.</p>`,
  )}`
}

/**
 * What each agreement lets the organisation do with students' data, when it must delete them and,
 * once several have ended, which deadline applies to the data; newest first.
 */
function agreementTerms(agreements: readonly AgreementRow[], ends: readonly AgreementEnd[], now: number): Html {
  if (agreements.length === 0) return html``
  const roles = deadlineRolesOf(agreements, ends, now)
  return html`<h3>Data-sharing agreements</h3>
<p>What your organisation may receive about students, for what, and when it must delete them. One deadline applies
to the data at a time: that of the agreement that stopped applying last before your links to the students ended. An
agreement that ended while another was in force, or was followed by a new one before its deadline, hands its data on
to that one, whose deadline then applies; once the links have ended after a deadline, that agreement is done, and a
newer one starts with only what is shared under it.</p>
${scrollTable({
  caption: 'Data-sharing agreements',
  headings: ['Document', 'State', 'Term', 'Purpose', 'Data shared', 'Disposition', 'Deadline that applies'],
  rows: [...agreements]
    .reverse()
    .map((a) =>
      tableRow([
        a.document_ref,
        agreementBadge(a, now),
        termText(a),
        purposeText(a),
        dataText(a),
        dispositionText(a),
        deadlineText(a, roles.get(a.id), agreements, ends),
      ]),
    ),
})}`
}

export function overviewBody(
  request: FastifyRequest,
  v: PartnerView,
  data: OverviewData,
  keyForm?: KeyFormState,
): Html {
  const { keys, students, now } = data
  const allowed = (v.organisation?.allowed_scopes ?? '').split(' ').filter(isScope)
  const revokeAction = {
    revoke: (row: ApiKeyRow) => `/dashboard/partner/keys/${row.id}/revoke`,
    roll: (row: ApiKeyRow) => `/dashboard/partner/keys/${row.id}/roll`,
  }
  const live = (organisation: OrganisationRow) => {
    const granted = allowed.length === 0 ? 'the catalog' : allowed.map((scope) => html`<code>${scope}</code> `)
    const agreement = v.agreementActive
      ? stateBadge('active')
      : html`<strong>none in force</strong> (student scopes need one; the operator records it)`
    return html`${deletionNotices(data.ends)}
<p>Organisation <strong>${organisation.name}</strong>: ${stateBadge(organisation.status)}.
Granted: ${granted}. Data-sharing agreement: ${agreement}.</p>
${agreementTerms(v.agreements, data.ends, now)}
<h3>Live keys</h3>
${keysTable(keys.live, now, revokeAction, 'Live keys')}
${
  organisation.status === 'active'
    ? createKeyForm(request, 'live', allowed, v.agreementActive, keyForm)
    : html`<p>Your organisation is suspended: keys cannot be created. Contact the operator.</p>`
}`
  }
  return html`<section aria-labelledby="application-heading"><h2 id="application-heading">Live access</h2>
${applicationSummary(data.application)}
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
}
