/**
 * An ended agreement as the operator's CLI (`agreement ended --json`) and the partner's API
 * (`POST /api/v1/deletion-attestations`) describe it: what ended, when the data must be deleted
 * by, when the links ended, and whom the deletion covers. One description, so the two never
 * tell the same end differently.
 */
import type { AgreementEnd } from '../storage/agreement-end-repository.js'

export interface EndedAgreementDocument {
  agreementId: string
  documentRef: string
  endedAt: string
  deletionDueAt: string
  unlinkedAt: string | null
  students: number
  coverage: AgreementEnd['coverage']
}

export function endedAgreementDocument(end: AgreementEnd): EndedAgreementDocument {
  return {
    agreementId: end.agreement.id,
    documentRef: end.agreement.document_ref,
    endedAt: end.endedAt,
    deletionDueAt: end.deletionDueAt,
    unlinkedAt: end.disposition?.unlinkedAt ?? null,
    students: end.students,
    coverage: end.coverage,
  }
}
