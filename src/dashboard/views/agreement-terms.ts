/**
 * An agreement's terms as the operator, the partner and the disclosure report show them: its
 * purpose, the data it shares, its term and the disposition rule (domain/agreement-terms.ts).
 */
import { deletionDueAt, describeDataCategories, storedDataCategories } from '../../domain/agreement-terms.js'
import type { AgreementRow } from '../../storage/tables.js'
import { utcDay } from '../times.js'

type Terms = Pick<
  AgreementRow,
  'signed_at' | 'expires_at' | 'ended_at' | 'purpose' | 'data_categories' | 'disposition_days' | 'document_ref'
>

/** Agreements recorded before purposes were have none stored: their signed document says it. */
export function purposeText(row: Terms): string {
  return row.purpose === '' ? `not recorded (see the signed document, ${row.document_ref})` : row.purpose
}

/** `first name, tier and progress`. */
export function dataText(row: Terms): string {
  return describeDataCategories(storedDataCategories(row.data_categories))
}

/** `2026-01-31 to 2027-01-31`, `from 2026-01-31, open-ended`, with an early end when there was one. */
export function termText(row: Terms): string {
  const term =
    row.expires_at === null
      ? `from ${utcDay(row.signed_at)}, open-ended`
      : `${utcDay(row.signed_at)} to ${utcDay(row.expires_at)}`
  const endedEarly = row.ended_at !== null && (row.expires_at === null || row.ended_at < row.expires_at)
  return endedEarly ? `${term} (ended on ${utcDay(row.ended_at!)})` : term
}

/** `delete within 30 days of its end (by 2027-03-02)`; the date once the end is known. */
export function dispositionText(row: Terms): string {
  const due = deletionDueAt(
    { signedAt: row.signed_at, expiresAt: row.expires_at, endedAt: row.ended_at },
    row.disposition_days,
  )
  const by = due === null ? '' : ` (by ${utcDay(due)})`
  if (row.disposition_days === 0) return `delete when it ends${by}`
  return `delete within ${row.disposition_days} day${row.disposition_days === 1 ? '' : 's'} of its end${by}`
}
