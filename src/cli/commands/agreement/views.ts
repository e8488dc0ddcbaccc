/**
 * An agreement as the `curriculum agreement` commands print it with --json, and its state now.
 */
import { deletionDueAt, storedDataCategories } from '../../../domain/agreement-terms.js'
import { type AgreementState, agreementState as stateAt } from '../../../domain/agreements.js'
import type { AgreementRow } from '../../../storage/tables.js'

/** The state at `now` (see domain/agreements.ts). */
export function agreementState(row: AgreementRow, now: number): AgreementState {
  return stateAt({ signedAt: row.signed_at, expiresAt: row.expires_at, endedAt: row.ended_at }, now)
}

export function agreementJson(row: AgreementRow, now: number, organisation?: string) {
  return {
    id: row.id,
    organisationId: row.organisation_id,
    ...(organisation === undefined ? {} : { organisation }),
    signedAt: row.signed_at,
    expiresAt: row.expires_at,
    endedAt: row.ended_at,
    documentRef: row.document_ref,
    createdAt: row.created_at,
    state: agreementState(row, now),
    purpose: row.purpose,
    dataCategories: storedDataCategories(row.data_categories),
    dispositionDays: row.disposition_days,
    deleteBy: deletionDueAt(datesOf(row), row.disposition_days),
  }
}

function datesOf(row: AgreementRow) {
  return { signedAt: row.signed_at, expiresAt: row.expires_at, endedAt: row.ended_at }
}
