/**
 * The disclosure log: one row per student-endpoint request that reached a student's data or
 * was refused it. It is the operator's record of who saw or changed which child's data, when,
 * and under which key, as student-privacy law expects. Rows are only ever added.
 */
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import {
  DISCLOSURE_ACTIONS,
  DISCLOSURE_OUTCOMES,
  type DisclosureAction,
  type DisclosureOutcome,
} from '../domain/disclosure.js'
import type { Database, DisclosureRow } from './tables.js'
import { preparedQuery } from './prepared-query.js'

export { DISCLOSURE_ACTIONS, DISCLOSURE_OUTCOMES, type DisclosureAction, type DisclosureOutcome }

/** Who is asking, and when: the part of a disclosure record the request supplies. */
export interface DisclosureContext {
  readonly at: number
  readonly requestId: string
  readonly keyId: string
  readonly organisationId: string
}

const insertDisclosure = preparedQuery(
  (
    db,
    at: string,
    requestId: string,
    keyId: string,
    organisationId: string,
    studentId: string,
    action: DisclosureAction,
    outcome: DisclosureOutcome,
  ) =>
    db.insertInto('disclosures').values({
      at,
      request_id: requestId,
      key_id: keyId,
      organisation_id: organisationId,
      student_id: studentId,
      action,
      outcome,
    }),
)

export async function recordDisclosure(
  db: Kysely<Database>,
  context: DisclosureContext,
  studentId: string,
  action: DisclosureAction,
  outcome: DisclosureOutcome,
): Promise<void> {
  await insertDisclosure(
    db,
    isoAt(context.at),
    context.requestId,
    context.keyId,
    context.organisationId,
    studentId,
    action,
    outcome,
  )
}

export interface DisclosureFilter {
  studentId?: string
  organisationId?: string
  keyId?: string
  action?: DisclosureAction
  outcome?: DisclosureOutcome
  /** Inclusive lower bound, epoch ms. */
  since?: number
  /** Exclusive upper bound, epoch ms. */
  until?: number
  limit?: number
}

/** Newest first. */
export async function listDisclosures(db: Kysely<Database>, filter: DisclosureFilter = {}): Promise<DisclosureRow[]> {
  let query = db.selectFrom('disclosures').selectAll()
  if (filter.studentId !== undefined) query = query.where('student_id', '=', filter.studentId)
  if (filter.organisationId !== undefined) query = query.where('organisation_id', '=', filter.organisationId)
  if (filter.keyId !== undefined) query = query.where('key_id', '=', filter.keyId)
  if (filter.action !== undefined) query = query.where('action', '=', filter.action)
  if (filter.outcome !== undefined) query = query.where('outcome', '=', filter.outcome)
  if (filter.since !== undefined) query = query.where('at', '>=', isoAt(filter.since))
  if (filter.until !== undefined) query = query.where('at', '<', isoAt(filter.until))
  return query
    .orderBy('at', 'desc')
    .orderBy('id', 'desc')
    .limit(filter.limit ?? 1000)
    .execute()
}
