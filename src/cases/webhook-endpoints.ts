/**
 * A partner's webhook endpoints as the dashboard manages them: registered (with a signing secret
 * shown once), the secret rolled, disabled and enabled (within the organisation's cap), and by
 * hand a test event or a delivery sent again (limited per endpoint; a resend about a student the
 * organisation may no longer hear about is refused and logged). The rules' queries live in
 * storage/webhook-endpoint-repository.ts and storage/webhook-repository.ts.
 */
import type { Kysely } from 'kysely'
import {
  createEndpoint,
  type NewEndpoint,
  rollSecret,
  setEndpointEnabled,
} from '../storage/webhook-endpoint-repository.js'
import {
  type ManualSendResult,
  type ResendResult,
  resendDelivery,
  sendTestEvent,
} from '../storage/webhook-repository.js'
import type { Database, WebhookEndpointRow } from '../storage/tables.js'

/** Registers an endpoint (EndpointLimitError past `maxEnabled`); the returned secret is the only time it is shown. */
export function addEndpoint(
  db: Kysely<Database>,
  spec: NewEndpoint,
  now: number,
): Promise<{ endpoint: WebhookEndpointRow; secret: string }> {
  return createEndpoint(db, spec, now)
}

/** A new secret, shown once; the old one keeps signing beside it for a day. */
export function rollEndpointSecret(db: Kysely<Database>, endpoint: WebhookEndpointRow, now: number): Promise<string> {
  return rollSecret(db, endpoint, now)
}

/** Disables or enables an endpoint; enabling one past `maxEnabled` throws EndpointLimitError. */
export function enableEndpoint(
  db: Kysely<Database>,
  endpoint: Pick<WebhookEndpointRow, 'id' | 'organisation_id'>,
  enabled: boolean,
  maxEnabled?: number,
): Promise<void> {
  return setEndpointEnabled(db, endpoint, enabled, maxEnabled)
}

/** A `webhook.test` event to the endpoint, unless it had its manual sends this minute. */
export function sendTestDelivery(
  db: Kysely<Database>,
  endpoint: WebhookEndpointRow,
  now: number,
): Promise<ManualSendResult> {
  return sendTestEvent(db, endpoint, now)
}

/** Sends one of the endpoint's deliveries again from the start of its schedule. */
export function resendEndpointDelivery(
  db: Kysely<Database>,
  deliveryId: string,
  endpoint: Pick<WebhookEndpointRow, 'id' | 'organisation_id'>,
  now: number,
): Promise<ResendResult> {
  return resendDelivery(db, deliveryId, endpoint, now)
}
