/**
 * What a disclosure record says happened. Every student-endpoint request that reached a
 * student's data, or was refused it, leaves one row (storage/disclosure-log.ts). A response
 * that lists several students (`students.list`: the roster; `progress.changes`: the change feed)
 * leaves one row per student in it. A webhook delivery about a student leaves one row when its
 * body is first sent (`disclosed` on a 2xx, `sent_unacknowledged` otherwise: the receiver may
 * have read it all the same), and one per refusal once access has ended (`denied_*`;
 * `denied_unlinked`: the student is no longer linked to the endpoint's organisation). The list of
 * ids a partner must delete once its agreement has ended, downloaded from its dashboard, leaves
 * one row per student (`deletion.list`): ids only, no data of the student's. A score sent to an
 * LTI platform's gradebook leaves one row when the platform first gets it (`lti.score`: the
 * `disclosed` and `sent_unacknowledged` of a webhook), and one per refusal once access has ended;
 * its key is `lti:<registration id>` and its request the score's id (cases/lti-scores.ts).
 */
import type { DataCategory } from './agreement-terms.js'
import type { SubscribableEvent } from './webhook-events.js'

export const DISCLOSURE_ACTIONS = [
  'progress.read',
  'enroll',
  'students.list',
  'progress.changes',
  'webhook',
  'deletion.list',
  'lti.score',
] as const
export type DisclosureAction = (typeof DISCLOSURE_ACTIONS)[number]

export const DISCLOSURE_OUTCOMES = [
  'disclosed',
  'updated',
  'unchanged',
  'not_found',
  'denied_scope',
  'denied_agreement',
  'denied_rate_limit',
  'denied_suspended',
  'sent_unacknowledged',
  'denied_unlinked',
] as const
export type DisclosureOutcome = (typeof DISCLOSURE_OUTCOMES)[number]

/** What each action hands over about a student when it does (progress.changes: the tier or an entry, with the name). */
const ACTION_DATA: Readonly<Record<DisclosureAction, readonly DataCategory[]>> = {
  'progress.read': ['first_name', 'tier', 'progress'],
  'students.list': ['first_name', 'tier'],
  'progress.changes': ['first_name', 'tier', 'progress'],
  // Deliveries carry ids and the changed fields, never first names (webhooks/); EVENT_DATA says which.
  webhook: ['tier', 'progress'],
  enroll: ['tier'],
  'deletion.list': [],
  // A score tells the platform the student's progress in one lesson, under the `sub` it knows them by.
  'lti.score': ['progress'],
}

/** What a delivery of each student event carries: notices that a student left carry the id only. */
const EVENT_DATA: Readonly<Record<Exclude<SubscribableEvent, 'catalog.published'>, readonly DataCategory[]>> = {
  'student.tier_changed': ['tier'],
  'progress.updated': ['progress'],
  'student.unlinked': [],
  'student.deleted': [],
}

const HANDED_OVER: ReadonlySet<DisclosureOutcome> = new Set([
  'disclosed',
  'updated',
  'unchanged',
  'sent_unacknowledged',
])

/**
 * The kinds of data a record's request may have handed over: none for a refusal or an unknown
 * student; for a webhook, what its event carries when the delivery is known (`webhookEvent`).
 */
export function disclosedData(
  action: DisclosureAction,
  outcome: DisclosureOutcome,
  webhookEvent?: string,
): readonly DataCategory[] {
  if (!HANDED_OVER.has(outcome)) return []
  if (action === 'webhook' && webhookEvent !== undefined && webhookEvent in EVENT_DATA)
    return EVENT_DATA[webhookEvent as keyof typeof EVENT_DATA]
  return ACTION_DATA[action]
}
