/**
 * An ended agreement as the partner and the operator see it (storage/agreement-end-repository.ts): whether
 * its links have ended or when they will, and who attested the deletion and when.
 */
import { type DeadlineRole, deadlineRoles } from '../../domain/disposition.js'
import type { AgreementEnd, AttestationView } from '../../storage/agreement-end-repository.js'
import type { AgreementRow } from '../../storage/tables.js'
import { type Html, html } from '../html.js'
import { utcDay, utcMinute } from '../times.js'

/** `ended 2026-05-01 10:00 UTC`, or `end on 2026-05-01` while the disposition period runs. */
export function linksText(end: AgreementEnd): string {
  return end.disposition === null
    ? `end on ${utcDay(end.deletionDueAt)}`
    : `ended ${utcMinute(end.disposition.unlinkedAt)}`
}

/** Who attested: an account by its e-mail address, a key by its prefix and name. */
export function attesterText(attestation: AttestationView): Html {
  return attestation.keyId !== null
    ? html`with key <code>${attestation.keyPrefix ?? attestation.keyId}\u2026</code>${
        attestation.keyName === null ? '' : ` (${attestation.keyName})`
      }`
    : html`by ${attestation.accountEmail ?? 'a partner account'} in the dashboard`
}

/** `2026-05-01 10:00 UTC with key cur_live_abc… (sync)`, or `not yet`. */
export function attestationText(end: AgreementEnd): Html {
  return end.attestation === null
    ? html`<strong>not yet</strong>`
    : html`${utcMinute(end.attestation.attestedAt)} ${attesterText(end.attestation)}`
}

/** `3 students`. */
export function studentsText(count: number): string {
  return `${count} student${count === 1 ? '' : 's'}`
}

/** `412 students (400 linked when the links ended, 10 unlinked and 2 erased earlier)`. */
export function coverageText(end: AgreementEnd): string {
  const { linked, unlinked, erased } = end.coverage
  const when = end.disposition === null ? 'linked now' : 'linked when the links ended'
  const earlier = unlinked + erased === 0 ? '' : `, ${unlinked} unlinked and ${erased} erased earlier`
  return `${studentsText(end.students)} (${linked} ${when}${earlier})`
}

/** Whose deadline applies to each of `agreements` (domain/disposition.ts `deadlineRoles`). */
export function deadlineRolesOf(
  agreements: readonly AgreementRow[],
  ends: readonly AgreementEnd[],
  now: number,
): Map<string, DeadlineRole> {
  const disposed = new Set(ends.filter((end) => end.disposition !== null).map((end) => end.agreement.id))
  const dates = agreements.map((a) => ({
    id: a.id,
    signedAt: a.signed_at,
    expiresAt: a.expires_at,
    endedAt: a.ended_at,
    dispositionDays: a.disposition_days,
  }))
  return deadlineRoles(dates, disposed, now)
}

/** What the partner is told of an agreement's deadline: whether it is the one that applies, and why. */
export function deadlineText(
  agreement: AgreementRow,
  role: DeadlineRole | undefined,
  agreements: readonly AgreementRow[],
  ends: readonly AgreementEnd[],
): Html | string {
  const end = ends.find((candidate) => candidate.agreement.id === agreement.id)
  switch (role?.role) {
    case 'governs':
      return html`<strong>applies</strong>: delete by ${utcDay(end?.deletionDueAt ?? '')} everything on its list in
<a href="/dashboard/partner/deletion">Data to delete</a>${
        end !== undefined && end.coverage.since < agreement.signed_at
          ? `, shared since ${utcDay(end.coverage.since)} under the agreements it took over too`
          : ''
      }`
    case 'disposed':
      return end?.disposition ? `applied: your links ended ${utcMinute(end.disposition.unlinkedAt)}` : 'applied'
    case 'handed_on': {
      const later = agreements.find((a) => a.id === role.to)
      return (
        `does not apply: ${later?.document_ref ?? 'a later agreement'} took its data over before this ` +
        'deadline, and the deadline of the end of that one applies'
      )
    }
    default:
      return ''
  }
}
