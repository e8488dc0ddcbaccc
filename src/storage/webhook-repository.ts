/**
 * Webhook endpoints and their outbox of deliveries. An event is written as one delivery row per
 * subscribed endpoint, in the transaction of the change it announces, so a committed change is
 * always announced and a rolled-back one never is. Workers on every instance claim due rows with
 * a lease (`claimDue`), so one instance sends a delivery at a time.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { type Kysely, sql } from 'kysely'
import { isoAt } from '../clock.js'
import type { KeyMode } from '../domain/api-key.js'
import type { ProgressEntry } from '../domain/progress.js'
import type { NewStudentChange } from '../domain/student-change.js'
import { DISABLE_AFTER_FAILING_MS, nextAttemptAt, type SubscribableEvent } from '../domain/webhook-events.js'
import { generateWebhookSecret } from '../domain/webhook-signature.js'
import { recordDisclosure } from './disclosure-log.js'
import { preparedQuery } from './prepared-query.js'
import type { Database, WebhookDeliveryRow, WebhookEndpointRow, WebhookEventType } from './tables.js'

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

async function enqueue(
  trx: Db,
  endpoints: readonly Pick<WebhookEndpointRow, 'id' | 'events'>[],
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
  await trx
    .insertInto('webhook_deliveries')
    .values(
      subscribed.map((endpoint) => ({
        id: deliveryId(),
        endpoint_id: endpoint.id,
        event_type: type,
        payload: body,
        student_id: studentId,
        created_at: isoAt(now),
        state: 'pending' as const,
        attempts: 0,
        next_attempt_at: isoAt(now),
      })),
    )
    .execute()
  return subscribed.length
}

/**
 * Announces a change to one student to the enabled endpoints of every organisation the student
 * is linked to that may see it now: live endpoints of organisations with an active agreement
 * for a real student, test endpoints of the sandbox for a synthetic one. Run it in the
 * transaction that makes the change.
 */
export async function announceStudentEvent(
  trx: Db,
  studentId: string,
  type: 'student.tier_changed' | 'progress.updated',
  data: object,
  now: number,
): Promise<number> {
  const at = isoAt(now)
  const endpoints = await trx
    .selectFrom('webhook_endpoints as e')
    .innerJoin('student_organisations as so', 'so.organisation_id', 'e.organisation_id')
    .innerJoin('students as s', 's.id', 'so.student_id')
    .select(['e.id', 'e.events'])
    .where('so.student_id', '=', studentId)
    .where('e.status', '=', 'enabled')
    .where((eb) =>
      eb.or([
        eb.and([eb('s.sandbox', '=', 1), eb('e.mode', '=', 'test')]),
        eb.and([
          eb('s.sandbox', '=', 0),
          eb('e.mode', '=', 'live'),
          eb.exists(
            eb
              .selectFrom('agreements as a')
              .select('a.id')
              .whereRef('a.organisation_id', '=', 'e.organisation_id')
              .where('a.signed_at', '<=', at)
              .where((w) => w.or([w('a.expires_at', 'is', null), w('a.expires_at', '>', at)]))
              .where((w) => w.or([w('a.ended_at', 'is', null), w('a.ended_at', '>', at)])),
          ),
        ]),
      ]),
    )
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
    .select(['id', 'events'])
    .where('status', '=', 'enabled')
    .execute()
  return enqueue(trx, endpoints, 'catalog.published', data, null, now)
}

/** A `webhook.test` event to one endpoint, from the dashboard's button. */
export function sendTestEvent(db: Db, endpoint: WebhookEndpointRow, now: number): Promise<number> {
  return enqueue(
    db,
    [endpoint],
    'webhook.test',
    { endpointId: endpoint.id, message: 'A test event from the dashboard.' },
    null,
    now,
  )
}

/** Sends a delivery again from the start of the schedule (the dashboard's "resend"). */
export async function resendDelivery(db: Db, deliveryId: string, endpointId: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({ state: 'pending', attempts: 0, next_attempt_at: isoAt(now), lease_until: null })
    .where('id', '=', deliveryId)
    .where('endpoint_id', '=', endpointId)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
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

export interface DueDelivery extends WebhookDeliveryRow {
  url: string
  secret: string
  previous_secret: string | null
  previous_secret_until: string | null
  organisation_id: string
}

/**
 * Takes up to `limit` due deliveries of enabled endpoints for `leaseMs`: no other instance
 * claims them until the lease ends (if this one dies mid-send, another sends them again, with
 * the same webhook-id, after the lease).
 */
export async function claimDue(db: Db, now: number, leaseMs: number, limit: number, engine: 'sqlite' | 'postgres') {
  const at = isoAt(now)
  const due = db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .select('d.id')
    .where('d.state', '=', 'pending')
    .where('d.next_attempt_at', '<=', at)
    .where('e.status', '=', 'enabled')
    .where((eb) => eb.or([eb('d.lease_until', 'is', null), eb('d.lease_until', '<=', at)]))
    .orderBy('d.next_attempt_at')
    .limit(limit)
  const lease = isoAt(now + leaseMs)
  const claimed = await db
    .updateTable('webhook_deliveries')
    .set({ lease_until: lease })
    // PostgreSQL: instances claiming at once skip each other's rows instead of waiting for them.
    .where('id', 'in', engine === 'postgres' ? due.forUpdate('d').skipLocked() : due)
    .returning('id')
    .execute()
  if (claimed.length === 0) return []
  const rows = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .selectAll('d')
    .select(['e.url', 'e.secret', 'e.previous_secret', 'e.previous_secret_until', 'e.organisation_id'])
    .where(
      'd.id',
      'in',
      claimed.map((row) => row.id),
    )
    .where('d.lease_until', '=', lease)
    .execute()
  return rows as DueDelivery[]
}

export interface AttemptRecord {
  ok: boolean
  status: number | null
  latencyMs: number
  error: string | null
  response: string
}

/**
 * Writes an attempt's outcome, if this instance still holds the lease: delivered (with the
 * disclosure record of a student's data reaching the organisation), or scheduled again, or
 * failed for good. An endpoint that has failed for three days is disabled. Run it in a
 * transaction.
 */
export async function recordAttempt(
  trx: Db,
  delivery: DueDelivery,
  attempt: AttemptRecord,
  now: number,
): Promise<void> {
  const attempts = delivery.attempts + 1
  const next = attempt.ok ? null : nextAttemptAt(attempts, now)
  const updated = await trx
    .updateTable('webhook_deliveries')
    .set({
      state: attempt.ok ? 'delivered' : next === null ? 'failed' : 'pending',
      attempts,
      next_attempt_at: next === null ? null : isoAt(next),
      lease_until: null,
      last_attempt_at: isoAt(now),
      last_status: attempt.status,
      last_latency_ms: attempt.latencyMs,
      last_error: attempt.error,
      last_response: attempt.response,
    })
    .where('id', '=', delivery.id)
    .where('lease_until', '=', delivery.lease_until)
    .executeTakeFirst()
  if (Number(updated.numUpdatedRows) === 0) return
  if (attempt.ok) {
    await trx
      .updateTable('webhook_endpoints')
      .set({ failing_since: null })
      .where('id', '=', delivery.endpoint_id)
      .execute()
    if (delivery.student_id !== null) {
      await recordDisclosure(
        trx,
        {
          at: now,
          requestId: delivery.id,
          keyId: `webhook:${delivery.endpoint_id}`,
          organisationId: delivery.organisation_id,
        },
        delivery.student_id,
        'webhook',
        'disclosed',
      )
    }
    return
  }
  await trx
    .updateTable('webhook_endpoints')
    .set({ failing_since: sql`coalesce(failing_since, ${isoAt(now)})` })
    .where('id', '=', delivery.endpoint_id)
    .execute()
  await trx
    .updateTable('webhook_endpoints')
    .set({
      status: 'disabled',
      disabled_reason: 'Every delivery failed for three days; fix the endpoint, then enable it again.',
    })
    .where('id', '=', delivery.endpoint_id)
    .where('failing_since', '<=', isoAt(now - DISABLE_AFTER_FAILING_MS))
    .execute()
}
