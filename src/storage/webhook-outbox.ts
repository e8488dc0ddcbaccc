/**
 * The sending side of the webhook outbox: workers on every instance claim due deliveries with a
 * lease (`claimDue`), so one instance sends a delivery at a time, then record each attempt
 * (`recordAttempt`). A delivery about a student is checked again at every claim: once the
 * organisation's access has ended it is not sent, and the refusal is disclosed.
 */
import { type Kysely, sql } from 'kysely'
import { isoAt } from '../clock.js'
import { DISABLE_AFTER_FAILING_MS, nextAttemptAt, REFUSAL_REASONS } from '../domain/webhook-events.js'
import { recordDisclosure } from './disclosure-log.js'
import type { Database, WebhookDeliveryRow } from './tables.js'
import { accessRefusal } from './webhook-access.js'
import { recordRefusal } from './webhook-repository.js'

type Db = Kysely<Database>

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
 * the same webhook-id, after the lease). A claimed delivery about a student the endpoint may no
 * longer hear about ends there as not sent, with its refusal disclosed; only the others are
 * returned. Run it in a transaction.
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
    .select(accessRefusal(sql.ref('d.student_id'), at).as('refusal'))
    .where(
      'd.id',
      'in',
      claimed.map((row) => row.id),
    )
    .where('d.lease_until', '=', lease)
    .execute()
  const allowed: DueDelivery[] = []
  for (const { refusal, ...delivery } of rows) {
    if (delivery.student_id === null || refusal === null) {
      allowed.push(delivery)
      continue
    }
    await db
      .updateTable('webhook_deliveries')
      .set({ state: 'not_sent', next_attempt_at: null, lease_until: null, last_error: REFUSAL_REASONS[refusal] })
      .where('id', '=', delivery.id)
      .execute()
    await recordRefusal(
      db,
      delivery.id,
      { id: delivery.endpoint_id, organisation_id: delivery.organisation_id },
      delivery.student_id,
      refusal,
      now,
    )
  }
  return allowed
}

export interface AttemptRecord {
  ok: boolean
  status: number | null
  latencyMs: number
  error: string | null
  response: string
  /** The body left for the endpoint (whatever came back): a student's data was disclosed. */
  bodySent: boolean
}

/**
 * Writes an attempt's outcome. The first attempt whose body was sent marks the delivery and,
 * for a student's data, writes its one disclosure row, whichever instance sent it and whether
 * or not it still holds the lease (the receiver has the data either way). The rest is written
 * only if this instance still holds the lease: delivered, or scheduled again, or failed for
 * good. An endpoint that has failed for three days is disabled. Run it in a transaction.
 */
export async function recordAttempt(
  trx: Db,
  delivery: DueDelivery,
  attempt: AttemptRecord,
  now: number,
): Promise<void> {
  if (attempt.bodySent) {
    // One row per delivery: of attempts recorded at once, the second waits for the first's
    // lock on the row (PostgreSQL) or its transaction (SQLite), then finds the mark set.
    const first = await trx
      .updateTable('webhook_deliveries')
      .set({ first_sent_at: isoAt(now) })
      .where('id', '=', delivery.id)
      .where('first_sent_at', 'is', null)
      .executeTakeFirst()
    if (Number(first.numUpdatedRows) > 0 && delivery.student_id !== null) {
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
        attempt.ok ? 'disclosed' : 'sent_unacknowledged',
      )
    }
  }
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
