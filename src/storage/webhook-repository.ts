/**
 * The outbox of webhook deliveries (endpoints: webhook-endpoint-repository.ts). An event is
 * written as one delivery row per subscribed endpoint, in the transaction of the change it
 * announces, so a committed change is always announced and a rolled-back one never is. Workers
 * on every instance send them (webhook-outbox-repository.ts).
 */
import { randomBytes } from 'node:crypto'
import { type Kysely, sql } from 'kysely'
import { isoAt } from '../clock.js'
import type { ProgressEntry } from '../domain/progress.js'
import type { TierId } from '../domain/tiers.js'
import type { NewStudentChange } from '../domain/student-change.js'
import { type DeliveryRefusal, type NoticeEvent, REFUSAL_REASONS, type SentEvent } from '../domain/webhook-events.js'
import { type WebhookData, webhookBody } from '../domain/webhook-payloads.js'
import { recordDisclosure } from './disclosure-log.js'
import { recordDepartures } from './student-departure-repository.js'
import { preparedQuery } from './prepared-query.js'
import type { Database, WebhookDeliveryRow, WebhookEndpointRow } from './tables.js'
import { accessRefusal } from './webhook-access-repository.js'

type Db = Kysely<Database>

function deliveryId(): string {
  return `msg_${randomBytes(16).toString('base64url')}`
}

/** The body every delivery carries (Standard Webhooks: type, timestamp, data), as the document declares it. */
function payload<E extends SentEvent>(type: E, data: WebhookData<E>, now: number): string {
  return webhookBody(type, data, isoAt(now))
}

/** An endpoint an event may go to, and why it may not have it, if it may not. */
interface Recipient {
  id: string
  events: string
  organisation_id: string
  refusal: DeliveryRefusal | null
}

async function enqueue<E extends SentEvent>(
  trx: Db,
  endpoints: readonly Recipient[],
  type: E,
  data: WebhookData<E>,
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
 * is linked to. An endpoint that may not hear about the student now (webhook-access-repository.ts) gets
 * the delivery already ended as not sent, and the refusal goes to the disclosure log. Run it in
 * the transaction that makes the change.
 */
export async function announceStudentEvent<E extends 'student.tier_changed' | 'progress.updated'>(
  trx: Db,
  studentId: string,
  type: E,
  data: WebhookData<E>,
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

/** Delivery rows per INSERT: 10 values each, well under both engines' parameter limits. */
const DELIVERY_CHUNK = 500

/**
 * Announces that students left organisations (`student.unlinked`: the link was removed;
 * `student.deleted`: the student was erased) to each organisation's enabled endpoints that
 * subscribed: data `{ profileId }` only. Unlike the other student events these are queued, and
 * sent, whatever the organisation's access now (see NOTICE_EVENTS): they ask the partner to
 * delete what it holds. Each notice is also recorded as a departure (student-departure-repository.ts), which
 * outlives the change feed's copy. Run it in the transaction that removes the links.
 */
export async function announceStudentNotices(
  trx: Db,
  type: NoticeEvent,
  notices: readonly { studentId: string; organisationId: string }[],
  now: number,
): Promise<number> {
  if (notices.length === 0) return 0
  await recordDepartures(trx, type, notices, now)
  const organisations = [...new Set(notices.map((notice) => notice.organisationId))]
  const endpoints = await trx
    .selectFrom('webhook_endpoints')
    .select(['id', 'events', 'organisation_id'])
    .where('organisation_id', 'in', organisations)
    .where('status', '=', 'enabled')
    .execute()
  const byOrganisation = new Map<string, string[]>()
  for (const endpoint of endpoints) {
    if (!endpoint.events.split(' ').includes(type)) continue
    byOrganisation.set(endpoint.organisation_id, [...(byOrganisation.get(endpoint.organisation_id) ?? []), endpoint.id])
  }
  const at = isoAt(now)
  const deliveries = notices.flatMap((notice) =>
    (byOrganisation.get(notice.organisationId) ?? []).map((endpointId) => ({
      id: deliveryId(),
      endpoint_id: endpointId,
      event_type: type,
      payload: payload(type, { profileId: notice.studentId }, now),
      student_id: notice.studentId,
      created_at: at,
      state: 'pending' as const,
      attempts: 0,
      next_attempt_at: at,
      last_error: null,
    })),
  )
  for (let from = 0; from < deliveries.length; from += DELIVERY_CHUNK)
    await trx
      .insertInto('webhook_deliveries')
      .values(deliveries.slice(from, from + DELIVERY_CHUNK))
      .execute()
  return deliveries.length
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
  const tiers = new Map<string, { tier: TierId; updatedAt: string }>()
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
export async function announceCatalogPublished(
  trx: Db,
  data: WebhookData<'catalog.published'>,
  now: number,
): Promise<number> {
  const endpoints = await trx
    .selectFrom('webhook_endpoints')
    .select(['id', 'events', 'organisation_id', sql<null>`null`.as('refusal')])
    .where('status', '=', 'enabled')
    .execute()
  return enqueue(trx, endpoints, 'catalog.published', data, null, now)
}

/** A `webhook.test` event to one endpoint (cases/webhook-endpoints.ts limits how often). */
export async function enqueueTestEvent(trx: Db, endpoint: WebhookEndpointRow, now: number): Promise<void> {
  const data: WebhookData<'webhook.test'> = { endpointId: endpoint.id, message: 'A test event from the dashboard.' }
  await enqueue(trx, [{ ...endpoint, refusal: null }], 'webhook.test', data, null, now)
}

/** One of the endpoint's deliveries, and why its student's data may not go to the endpoint now, if it may not. */
export function deliveryToResend(trx: Db, deliveryId: string, endpointId: string, now: number) {
  return trx
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .select(['d.id', 'd.student_id', 'd.event_type', accessRefusal(sql.ref('d.student_id'), isoAt(now)).as('refusal')])
    .where('d.id', '=', deliveryId)
    .where('d.endpoint_id', '=', endpointId)
    .executeTakeFirst()
}

/** Puts a delivery back at the start of its schedule. */
export async function requeueDelivery(trx: Db, deliveryId: string, now: number): Promise<void> {
  await trx
    .updateTable('webhook_deliveries')
    .set({ state: 'pending', attempts: 0, next_attempt_at: isoAt(now), lease_until: null })
    .where('id', '=', deliveryId)
    .execute()
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
