/**
 * What a disclosure record says happened. Every student-endpoint request that reached a
 * student's data, or was refused it, leaves one row (storage/disclosure-log.ts). A response
 * that lists several students (`students.list`: the roster; `progress.changes`: the change feed)
 * leaves one row per student in it.
 */
export const DISCLOSURE_ACTIONS = ['progress.read', 'enroll', 'students.list', 'progress.changes', 'webhook'] as const
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
] as const
export type DisclosureOutcome = (typeof DISCLOSURE_OUTCOMES)[number]
