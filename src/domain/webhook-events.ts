/** The events a partner can subscribe an endpoint to, and how failed deliveries are retried. */
export const WEBHOOK_EVENTS = [
  'student.tier_changed',
  'progress.updated',
  'student.unlinked',
  'student.deleted',
  'catalog.published',
] as const
export type SubscribableEvent = (typeof WEBHOOK_EVENTS)[number]

/** Every event a delivery may carry: the subscribable ones, and the dashboard's test event, sent to any endpoint. */
export const SENT_EVENTS = [...WEBHOOK_EVENTS, 'webhook.test'] as const
export type SentEvent = (typeof SENT_EVENTS)[number]

/**
 * Notices that a student left an organisation (unlinked, or erased): they tell the partner to
 * delete its copy and carry the student's id only, so they are sent whatever the organisation's
 * access now (agreement, suspension, link), which the other student events are checked against.
 */
export const NOTICE_EVENTS = ['student.unlinked', 'student.deleted'] as const
export type NoticeEvent = (typeof NOTICE_EVENTS)[number]

export function isNoticeEvent(type: string): type is NoticeEvent {
  return (NOTICE_EVENTS as readonly string[]).includes(type)
}

export function isWebhookEvent(value: string): value is SubscribableEvent {
  return (WEBHOOK_EVENTS as readonly string[]).includes(value)
}

/**
 * Waits before each retry after a failed attempt (the Standard Webhooks schedule): attempts at
 * 0, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h later, 27.6 hours in all, so a receiver that is
 * down for a day still gets the event.
 */
export const RETRY_DELAYS_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000] as const

/** An endpoint whose every attempt has failed for this long is disabled. */
export const DISABLE_AFTER_FAILING_MS = 3 * 24 * 60 * 60 * 1000

/** When the attempt after `attempts` failed ones is due, or null when there is none left. */
export function nextAttemptAt(attempts: number, failedAt: number): number | null {
  const delay = RETRY_DELAYS_MS[attempts - 1]
  return delay === undefined ? null : failedAt + delay
}

/** Why a delivery about a student was not sent: its disclosure outcome. */
export type DeliveryRefusal = 'denied_suspended' | 'denied_agreement' | 'denied_unlinked'

/** What the delivery log and the resend page say about each refusal. */
export const REFUSAL_REASONS: Record<DeliveryRefusal, string> = {
  denied_suspended: 'the organisation is suspended',
  denied_agreement: 'no data-sharing agreement is in force',
  denied_unlinked: 'the student is no longer linked to the organisation',
}

/** Test events and resends a partner may ask for, per endpoint, in any minute. */
export const MANUAL_SENDS = { limit: 10, windowMs: 60_000 } as const

/** Attempts one endpoint is sent at once, by all instances together. */
export const ENDPOINT_CONCURRENCY = 2

/** The longest an endpoint whose attempts time out is left alone. */
export const MAX_TIMEOUT_BACKOFF_MS = 10 * 60_000

/**
 * How long an endpoint is sent nothing after `timeouts` attempts in a row timed out: as long as
 * one attempt's deadline, doubling with each further one, at most MAX_TIMEOUT_BACKOFF_MS. An
 * endpoint that never answers then holds its two slots a small part of the time.
 */
export function timeoutBackoffMs(timeouts: number, timeoutMs: number): number {
  return Math.min(MAX_TIMEOUT_BACKOFF_MS, timeoutMs * 2 ** Math.min(Math.max(timeouts - 1, 0), 20))
}
