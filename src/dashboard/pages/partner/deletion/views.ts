/**
 * The partner's "Data to delete" page: each ended agreement, what the organisation must delete
 * (how many students, their ids as a download) and by when, and the attestation, made after a
 * confirmation page.
 */
import type { FastifyRequest } from 'fastify'
import type { AgreementEnd } from '../../../../storage/agreement-end-repository.js'
import { type Html, html } from '../../../html.js'
import { csrfField } from '../../../layout.js'
import { utcDay } from '../../../times.js'
import { attestationText, coverageText, linksText, studentsText } from '../../../views/agreement-ends.js'
import { purposeText } from '../../../views/agreement-terms.js'

export const BASE = '/dashboard/partner/deletion'

function endSection(end: AgreementEnd): Html {
  const a = end.agreement
  const id = `end-${a.id}`
  const action =
    end.attestation === null
      ? html`<p><a class="button" href="${BASE}/${a.id}/attest">I attest we deleted these\u2026</a></p>`
      : ''
  return html`<section aria-labelledby="${id}"><h2 id="${id}">Agreement ${a.document_ref}</h2>
<dl>
  <dt>Agreement id</dt><dd><code>${a.id}</code></dd>
  <dt>Purpose</dt><dd>${purposeText(a)}</dd>
  <dt>Ended</dt><dd>${utcDay(end.endedAt)}</dd>
  <dt>Delete by</dt><dd><strong>${utcDay(end.deletionDueAt)}</strong>
  (${a.disposition_days} day${a.disposition_days === 1 ? '' : 's'} after the end)</dd>
  <dt>Your links to the students</dt><dd>${linksText(end)}</dd>
  <dt>To delete</dt><dd>everything you hold about ${coverageText(end)}: every student shared with you
  since ${utcDay(end.coverage.since)} under this agreement${
    end.coverage.since < a.signed_at ? ' and the earlier ones it took over, whose data its deadline covers' : ''
  }.
  <a href="${BASE}/${a.id}/students.csv" download>The list (CSV)</a>: each student\u2019s id, and how and when you
  were asked to delete it.</dd>
  <dt>Deletion attested</dt><dd>${attestationText(end)}</dd>
</dl>
${action}
</section>`
}

export function deletionBody(ends: readonly AgreementEnd[], attested: unknown): Html {
  const done = ends.find((end) => end.agreement.id === attested && end.attestation !== null)
  const notice =
    done === undefined
      ? ''
      : html`<p class="notice" role="status">Your attestation for agreement ${done.agreement.document_ref} was
recorded; the district\u2019s certificate of deletion shows it.</p>`
  if (ends.length === 0)
    return html`<p class="empty">No data-sharing agreement of your organisation has ended with data to delete.</p>`
  return html`${notice}
<p>When a data-sharing agreement ends and no newer one is in force, your organisation must delete what it received
under it within the agreement\u2019s disposition period: about every student shared with it under the agreement, those
still linked and those unlinked or erased meanwhile (you were sent a <code>student.unlinked</code> or
<code>student.deleted</code> notice about each when it happened). When that period is over your links to the students
still linked end and you are sent a <code>student.unlinked</code> notice for each (change feed and webhook). Attest the
deletion of the whole list here or with <code>POST /api/v1/deletion-attestations</code>; you may do so as soon as it
is done.</p>
${ends.map(endSection)}`
}

export function attestConfirmBody(request: FastifyRequest, organisation: string, end: AgreementEnd): Html {
  const a = end.agreement
  return html`<p>You are about to attest, for <strong>${organisation}</strong>, that it deleted everything it received
about the ${studentsText(end.students)} on the list of agreement <strong>${a.document_ref}</strong>
(every student shared with it under the agreement, those unlinked or erased meanwhile too)
(ended ${utcDay(end.endedAt)}, delete by ${utcDay(end.deletionDueAt)}): from its systems, its backups as the
agreement says, and any service it passed them to.</p>
<ul>
  <li>The attestation is recorded with the time and your account, and appears on the district\u2019s certificate
  of deletion.</li>
  <li>It is made once and cannot be withdrawn.</li>
</ul>
<form method="post" action="${BASE}/${a.id}/attest" class="row">
  ${csrfField(request)}
  <button type="submit">I attest we deleted these</button>
  <a href="${BASE}">Cancel</a>
</form>`
}
