/**
 * A partner's webhook endpoints as the dashboard manages them: registered (with a signing secret
 * shown once), the secret rolled, disabled and enabled, and by hand a test event or a delivery
 * sent again (limited per endpoint: storage/webhook-manual-send-repository.ts; a resend about a student the
 * organisation may no longer hear about is refused and logged). An organisation has at most
 * MAX_WEBHOOK_ENDPOINTS_PER_ORGANISATION enabled endpoints: each may hold sending slots of every
 * instance, so without a cap more endpoints would mean a larger share of them.
 */
import type { Kysely } from 'kysely'
import { lockOrganisation } from '../storage/access-repository.js'
import {
  countEnabledEndpoints,
  createEndpoint,
  EndpointLimitError,
  endpointStatus,
  type NewEndpoint,
  rollSecret,
  setEndpointStatus,
} from '../storage/webhook-endpoint-repository.js'
import { type DeliveryRefusal, isNoticeEvent } from '../domain/webhook-events.js'
import type { Database, WebhookEndpointRow } from '../storage/tables.js'
import { inTransaction } from '../storage/transaction.js'
import { takeManualSend } from '../storage/webhook-manual-send-repository.js'
import { deliveryToResend, enqueueTestEvent, recordRefusal, requeueDelivery } from '../storage/webhook-repository.js'

export interface CappedEndpoint extends NewEndpoint {
  /** Enabled endpoints the organisation may have; none when absent. */
  maxEnabled?: number
}

/**
 * Throws EndpointLimitError if the organisation already has `max` enabled endpoints. Run it in
 * the transaction that adds or enables one: count and change must be one step, or two at 9 of 10
 * both pass.
 */
async function checkRoom(trx: Kysely<Database>, organisationId: string, max: number | undefined): Promise<void> {
  if (max === undefined) return
  await lockOrganisation(trx, organisationId)
  if ((await countEnabledEndpoints(trx, organisationId)) >= max) throw new EndpointLimitError(max)
}

/** Registers an endpoint (EndpointLimitError past `maxEnabled`); the returned secret is the only time it is shown. */
export async function addEndpoint(
  db: Kysely<Database>,
  spec: CappedEndpoint,
  now: number,
): Promise<{ endpoint: WebhookEndpointRow; secret: string }> {
  return inTransaction(db, async (trx) => {
    await checkRoom(trx, spec.organisationId, spec.maxEnabled)
    return createEndpoint(trx, spec, now)
  })
}

/** A new secret, shown once; the old one keeps signing beside it for a day. */
export function rollEndpointSecret(db: Kysely<Database>, endpoint: WebhookEndpointRow, now: number): Promise<string> {
  return rollSecret(db, endpoint, now)
}

/** Disables or enables an endpoint; enabling one past `maxEnabled` throws EndpointLimitError. */
export async function enableEndpoint(
  db: Kysely<Database>,
  endpoint: Pick<WebhookEndpointRow, 'id' | 'organisation_id'>,
  enabled: boolean,
  maxEnabled?: number,
): Promise<void> {
  await inTransaction(db, async (trx) => {
    if (enabled) {
      if ((await endpointStatus(trx, endpoint.id)) === 'enabled') return
      await checkRoom(trx, endpoint.organisation_id, maxEnabled)
    }
    await setEndpointStatus(trx, endpoint.id, enabled)
  })
}

/** What a send asked for by hand came to: `limited` when the endpoint had its share this minute. */
export type ManualSendResult = { outcome: 'queued' } | { outcome: 'limited'; retryAfterMs: number }

export type ResendResult =
  | ManualSendResult
  | { outcome: 'not_found' }
  | { outcome: 'refused'; refusal: DeliveryRefusal }

/** A `webhook.test` event to one endpoint, from the dashboard's button; limited per endpoint. */
export function sendTestEvent(
  db: Kysely<Database>,
  endpoint: WebhookEndpointRow,
  now: number,
): Promise<ManualSendResult> {
  return inTransaction(db, async (trx) => {
    const retryAfterMs = await takeManualSend(trx, endpoint.id, now)
    if (retryAfterMs > 0) return { outcome: 'limited', retryAfterMs }
    await enqueueTestEvent(trx, endpoint, now)
    return { outcome: 'queued' }
  })
}

/**
 * Sends a delivery again from the start of the schedule (the dashboard's "resend"), limited per
 * endpoint with test events, unless it is about a student the endpoint's organisation may no
 * longer hear about: then nothing is queued and the refusal goes to the disclosure log. A notice
 * (NOTICE_EVENTS) is sent again whatever the access.
 */
export function resendDelivery(
  db: Kysely<Database>,
  deliveryId: string,
  endpoint: Pick<WebhookEndpointRow, 'id' | 'organisation_id'>,
  now: number,
): Promise<ResendResult> {
  return inTransaction(db, async (trx) => {
    const delivery = await deliveryToResend(trx, deliveryId, endpoint.id, now)
    if (delivery === undefined) return { outcome: 'not_found' }
    // Counted before the access check, so that refusals, each a disclosure row, are limited too.
    const retryAfterMs = await takeManualSend(trx, endpoint.id, now)
    if (retryAfterMs > 0) return { outcome: 'limited', retryAfterMs }
    if (delivery.student_id !== null && delivery.refusal !== null && !isNoticeEvent(delivery.event_type)) {
      await recordRefusal(trx, delivery.id, endpoint, delivery.student_id, delivery.refusal, now)
      return { outcome: 'refused', refusal: delivery.refusal }
    }
    await requeueDelivery(trx, deliveryId, now)
    return { outcome: 'queued' }
  })
}
