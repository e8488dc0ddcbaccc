/**
 * Webhook endpoints and their outbox of deliveries. An event is written as one delivery row per
 * subscribed endpoint, in the transaction of the change it announces, so a committed change is
 * always announced and a rolled-back one never is. Workers on every instance send them
 * (webhook-outbox.ts).
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { type Kysely, sql } from 'kysely'
import { isoAt } from '../clock.js'
import type { KeyMode } from '../domain/api-key.js'
import type { ProgressEntry } from '../domain/progress.js'
import type { NewStudentChange } from '../domain/student-change.js'
import { type DeliveryRefusal, REFUSAL_REASONS, type SubscribableEvent } from '../domain/webhook-events.js'
import { generateWebhookSecret } from '../domain/webhook-signature.js'
import { recordDisclosure } from './disclosure-log.js'
import { preparedQuery } from './prepared-query.js'
import type { Database, WebhookDeliveryRow, WebhookEndpointRow, WebhookEventType } from './tables.js'
import { inTransaction } from './transaction.js'
import { accessRefusal } from './webhook-access.js'

type Db = Kysely<Database>

/** How long the previous secret still signs after a roll, so receivers can switch without missing a delivery. */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 60 * 60 * 1000

export interface NewEndpoint {
  organisationId: string
  mode: KeyMode
  url: string
  events: readonly SubscribableEvent[]
  createdBy?: string
}

/** Registers an endpoint; the returned secret is the only time it is shown. */
export async function createEndpoint(
  db: Db,
  spec: NewEndpoint,
  now: number,
): Promise<{ endpoint: WebhookEndpointRow; secret: string }> {
  const secret = generateWebhookSecret()
  const endpoint: WebhookEndpointRow = {
    id: randomUUID(),
    organisation_id: spec.organisationId,
    mode: spec.mode,
    url: spec.url,
    events: spec.events.join(' '),
    secret,
    previous_secret: null,
    previous_secret_until: null,
    status: 'enabled',
    disabled_reason: null,
    failing_since: null,
    created_at: isoAt(now),
    created_by: spec.createdBy ?? null,
    claimed_at: null,
    backoff_until: null,
    timeouts: 0,
  }
  await db.insertInto('webhook_endpoints').values(endpoint).execute()
  return { endpoint, secret }
}

export function listEndpoints(db: Db, organisationIds: readonly string[]): Promise<WebhookEndpointRow[]> {
  if (organisationIds.length === 0) return Promise.resolve([])
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('organisation_id', 'in', organisationIds)
    .orderBy('created_at')
    .execute()
}

export function findEndpoint(db: Db, id: string, organisationIds: readonly string[]) {
  if (organisationIds.length === 0) return Promise.resolve(undefined)
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('id', '=', id)
    .where('organisation_id', 'in', organisationIds)
    .executeTakeFirst()
}

/** A new secret; the old one keeps signing beside it for a day. Returns the new secret, shown once. */
export async function rollSecret(db: Db, endpoint: WebhookEndpointRow, now: number): Promise<string> {
  const secret = generateWebhookSecret()
  await db
    .updateTable('webhook_endpoints')
    .set({ secret, previous_secret: endpoint.secret, previous_secret_until: isoAt(now + PREVIOUS_SECRET_GRACE_MS) })
    .where('id', '=', endpoint.id)
    .execute()
  return secret
}

export async function setEndpointEnabled(db: Db, endpointId: string, enabled: boolean): Promise<void> {
  await db
    .updateTable('webhook_endpoints')
    .set(
      enabled
        ? { status: 'enabled', disabled_reason: null, failing_since: null }
        : { status: 'disabled', disabled_reason: 'Disabled by your organisation.' },
    )
    .where('id', '=', endpointId)
    .execute()
}

/** The secrets that sign a delivery now: the current one, and the previous one during its grace day. */
export function signingSecrets(
  endpoint: Pick<WebhookEndpointRow, 'secret' | 'previous_secret' | 'previous_secret_until'>,
  now: number,
) {
  const previous =
    endpoint.previous_secret !== null &&
    endpoint.previous_secret_until !== null &&
    Date.parse(endpoint.previous_secret_until) > now
      ? [endpoint.previous_secret]
      : []
  return [endpoint.secret, ...previous]
}

function deliveryId(): string {
  return `msg_${randomBytes(16).toString('base64url')}`
}

/** The body every delivery carries (Standard Webhooks: type, timestamp, data). */
function payload(type: WebhookEventType, data: object, now: number): string {
  return JSON.stringify({ type, timestamp: isoAt(now), data })
}

/** An endpoint an event may go to, and why it may not have it, if it may not. */
interface Recipient {
  id: string
  events: string
  organisation_id: string
  refusal: DeliveryRefusal | null
}

async function enqueue(
  trx: Db,
  endpoints: readonly Recipient[],
  type: WebhookEventType,
  data: object,
  studentId: string | null,
  now: number,
): Promise<number> {
  const subscribed = endpoints.filter(
    (endpoint) => type === 'webhook.test' || endpoint.events.split(' ').includes(type),
  )
  if (subscribed.length === 0) return 0
  const body = payload(type, data, now)
  const deliveries = subscribed.map((endpoint) => {
    const refusal = studentId === null ? null : endpoint.refusal
    return {
      id: deliveryId(),
      endpoint_id: endpoint.id,
      event_type: type,
      payload: body,
      student_id: studentId,
      created_at: isoAt(now),
      state: refusal === null ? ('pending' as const) : ('not_sent' as const),
      attempts: 0,
      next_attempt_at: refusal === null ? isoAt(now) : null,
      last_error: refusal === null ? null : REFUSAL_REASONS[refusal],
    }
  })
  await trx.insertInto('webhook_deliveries').values(deliveries).execute()
  for (const [i, endpoint] of subscribed.entries()) {
    if (studentId !== null && endpoint.refusal !== null)
      await recordRefusal(trx, deliveries[i]!.id, endpoint, studentId, endpoint.refusal, now)
  }
  return deliveries.filter((delivery) => delivery.state === 'pending').length
}

/** The disclosure row of a student delivery refused because access has ended. */
export function recordRefusal(
  trx: Db,
  deliveryId: string,
  endpoint: { id: string; organisation_id: string },
  studentId: string,
  refusal: DeliveryRefusal,
  now: number,
): Promise<void> {
  return recordDisclosure(
    trx,
    { at: now, requestId: deliveryId, keyId: `webhook:${endpoint.id}`, organisationId: endpoint.organisation_id },
    studentId,
    'webhook',
    refusal,
  )
}

/**
 * Announces a change to one student to the enabled endpoints of every organisation the student
 * is linked to. An endpoint that may not hear about the student now (webhook-access.ts) gets
 * the delivery already ended as not sent, and the refusal goes to the disclosure log. Run it in
 * the transaction that makes the change.
 */
export async function announceStudentEvent(
  trx: Db,
  studentId: string,
  type: 'student.tier_changed' | 'progress.updated',
  data: object,
  now: number,
): Promise<number> {
  const endpoints = await trx
    .selectFrom('webhook_endpoints as e')
    .innerJoin('student_organisations as so', 'so.organisation_id', 'e.organisation_id')
    .select(['e.id', 'e.events', 'e.organisation_id', accessRefusal(studentId, isoAt(now)).as('refusal')])
    .where('so.student_id', '=', studentId)
    .where('e.status', '=', 'enabled')
    .execute()
  return enqueue(trx, endpoints, type, data, studentId, now)
}

/** Asked for every change announced (an import's, an enroll's when endpoints are enabled): built once. */
const anyEnabledEndpoint = preparedQuery((db) =>
  db.selectFrom('webhook_endpoints').select('id').where('status', '=', 'enabled').limit(1),
)

/**
 * Announces what an import changed: a `student.tier_changed` per student whose tier changed (its
 * last tier), and one `progress.updated` per student with the entries that changed. Costs one
 * query when no endpoint is enabled at all, the usual case.
 */
export async function announceStudentChanges(
  trx: Db,
  changes: readonly NewStudentChange[],
  now: number,
): Promise<void> {
  if (changes.length === 0) return
  const [anyEndpoint] = await anyEnabledEndpoint(trx)
  if (anyEndpoint === undefined) return
  const tiers = new Map<string, { tier: string; updatedAt: string }>()
  const entries = new Map<string, ProgressEntry[]>()
  for (const change of changes) {
    if (change.type === 'tier_changed') tiers.set(change.studentId, { tier: change.tier, updatedAt: change.changedAt })
    else entries.set(change.studentId, [...(entries.get(change.studentId) ?? []), change.entry])
  }
  for (const [studentId, { tier, updatedAt }] of tiers) {
    await announceStudentEvent(trx, studentId, 'student.tier_changed', { profileId: studentId, tier, updatedAt }, now)
  }
  for (const [studentId, progress] of entries) {
    await announceStudentEvent(trx, studentId, 'progress.updated', { profileId: studentId, progress }, now)
  }
}

/** Announces a newly published catalog to every enabled endpoint that subscribed to it. */
export async function announceCatalogPublished(trx: Db, data: object, now: number): Promise<number> {
  const endpoints = await trx
    .selectFrom('webhook_endpoints')
    .select(['id', 'events', 'organisation_id', sql<null>`null`.as('refusal')])
    .where('status', '=', 'enabled')
    .execute()
  return enqueue(trx, endpoints, 'catalog.published', data, null, now)
}

/** A `webhook.test` event to one endpoint, from the dashboard's button. */
export function sendTestEvent(db: Db, endpoint: WebhookEndpointRow, now: number): Promise<number> {
  return enqueue(
    db,
    [{ ...endpoint, refusal: null }],
    'webhook.test',
    { endpointId: endpoint.id, message: 'A test event from the dashboard.' },
    null,
    now,
  )
}

export type ResendResult =
  | { outcome: 'queued' }
  | { outcome: 'not_found' }
  | { outcome: 'refused'; refusal: DeliveryRefusal }

/**
 * Sends a delivery again from the start of the schedule (the dashboard's "resend"), unless it
 * is about a student the endpoint's organisation may no longer hear about: then nothing is
 * queued and the refusal goes to the disclosure log.
 */
export function resendDelivery(
  db: Db,
  deliveryId: string,
  endpoint: Pick<WebhookEndpointRow, 'id' | 'organisation_id'>,
  now: number,
): Promise<ResendResult> {
  return inTransaction(db, async (trx) => {
    const delivery = await trx
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
      .select(['d.id', 'd.student_id', accessRefusal(sql.ref('d.student_id'), isoAt(now)).as('refusal')])
      .where('d.id', '=', deliveryId)
      .where('d.endpoint_id', '=', endpoint.id)
      .executeTakeFirst()
    if (delivery === undefined) return { outcome: 'not_found' }
    if (delivery.student_id !== null && delivery.refusal !== null) {
      await recordRefusal(trx, delivery.id, endpoint, delivery.student_id, delivery.refusal, now)
      return { outcome: 'refused', refusal: delivery.refusal }
    }
    await trx
      .updateTable('webhook_deliveries')
      .set({ state: 'pending', attempts: 0, next_attempt_at: isoAt(now), lease_until: null })
      .where('id', '=', deliveryId)
      .execute()
    return { outcome: 'queued' }
  })
}

export function listDeliveries(db: Db, endpointId: string, limit = 100): Promise<WebhookDeliveryRow[]> {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('endpoint_id', '=', endpointId)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .limit(limit)
    .execute()
}
