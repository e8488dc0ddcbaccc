/**
 * A refused request for a student's data, recorded in the disclosure log with why (scope,
 * agreement, rate limit, suspension): the operator then sees every attempt on a child's data,
 * not only the successful ones. Refusals before the key is identified have no one to attribute
 * and are not recorded; nor are refusals of any other kind.
 */
import type { ProblemCode } from '../errors.js'
import {
  type DisclosureAction,
  type DisclosureContext,
  type DisclosureOutcome,
  recordDisclosure,
} from '../storage/disclosure-log.js'
import type { WriteQueue } from '../storage/write-queue.js'

const OUTCOMES: Partial<Record<ProblemCode, DisclosureOutcome>> = {
  insufficient_scope: 'denied_scope',
  agreement_required: 'denied_agreement',
  rate_limited: 'denied_rate_limit',
  organisation_suspended: 'denied_suspended',
}

/** What the log records for a refusal with `code`; undefined for a refusal it does not record. */
export function refusalOutcome(code: ProblemCode): DisclosureOutcome | undefined {
  return OUTCOMES[code]
}

/** Records a refusal of `action` on `studentId`; resolves once the row is committed. */
export async function recordRefusedAccess(
  writes: WriteQueue,
  context: DisclosureContext,
  studentId: string,
  action: DisclosureAction,
  outcome: DisclosureOutcome,
): Promise<void> {
  await writes.statement((db) => recordDisclosure(db, context, studentId, action, outcome))
}
