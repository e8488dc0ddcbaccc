/**
 * The sending side of the webhook outbox: workers on every instance claim due deliveries with a
 * lease (`claimDue`), so one instance sends a delivery at a time, then record each attempt
 * (`recordAttempt`). A delivery about a student is checked again at every claim: once the
 * organisation's access has ended it is not sent, and the refusal is disclosed; notices that a
 * student left (NOTICE_EVENTS) are sent all the same.
 */
import { type Kysely, sql } from 'kysely'
import { isoAt } from '../clock.js'
import {
  DISABLE_AFTER_FAILING_MS,
  isNoticeEvent,
  nextAttemptAt,
  REFUSAL_REASONS,
  timeoutBackoffMs,
} from '../domain/webhook-events.js'
import { recordDisclosure } from './disclosure-log.js'
import type { Database, WebhookDeliveryRow } from './tables.js'
import { accessRefusal } from './webhook-access-repository.js'
import type { TransactionLocks } from './transaction.js'
import { recordRefusal } from './webhook-repository.js'

type Db = Kysely<Database>

export interface DueDelivery extends WebhookDeliveryRow {
  url: string
  secret: string
  previous_secret: string | null
  previous_secret_until: string | null
  organisation_id: string
}

export interface ClaimOptions {
  now: number
  /** How long the claimed deliveries are kept from other instances. */
  leaseMs: number
  /** Deliveries this instance can start now. */
  slots: number
  /** Attempts one endpoint may have under way at once, across instances. */
  perEndpoint: number
  /** The engine's (`Storage.locks`): one claimer per endpoint at a time. */
  locks: TransactionLocks
}

export interface Claim {
  /** The claimed deliveries to send. */
  due: DueDelivery[]
  /** Deliveries claimed in all (those refused for lack of access included). */
  claimed: number
  /** Endpoints with room and due deliveries that another instance was claiming for meanwhile. */
  skipped: number
}

/** The endpoints in turns: each organisation's first, then each one's second, and so on. */
export function byOrganisationTurns<T extends { organisation_id: string }>(endpoints: readonly T[]): T[] {
  const queues = new Map<string, T[]>()
  for (const endpoint of endpoints) {
    const queue = queues.get(endpoint.organisation_id)
    if (queue === undefined) queues.set(endpoint.organisation_id, [endpoint])
    else queue.push(endpoint)
  }
  const turns: T[] = []
  for (let round = 0; turns.length < endpoints.length; round++) {
    for (const queue of queues.values()) if (round < queue.length) turns.push(queue[round]!)
  }
  return turns
}

/**
 * Takes due deliveries for `leaseMs`, fairly: no endpoint has more than `perEndpoint` attempts
 * under way (counting other instances'), endpoints backing off after timeouts are left alone,
 * and the slots go in turns, first across organisations, then across their endpoints, the least
 * recently served first. So an endpoint that hangs holds at most its own few slots, and delays
 * nobody else's deliveries.
 *
 * No other instance claims a delivery until its lease ends (if this one dies mid-send, another
 * sends it again, with the same webhook-id, after the lease). One instance at a time counts and
 * claims an endpoint's deliveries (`locks`: on SQLite, transactions run one at a time). A
 * claimed delivery about a student the endpoint may no longer hear about ends there as not sent,
 * with its refusal disclosed. Run it in a transaction.
 */
export async function claimDue(db: Db, options: ClaimOptions): Promise<Claim> {
  const { now, leaseMs, slots, perEndpoint, locks } = options
  if (slots <= 0) return { due: [], claimed: 0, skipped: 0 }
  const at = isoAt(now)
  const candidates = db
    .selectFrom('webhook_endpoints as e')
    .select(['e.id', 'e.organisation_id'])
    .where('e.status', '=', 'enabled')
    .where((eb) => eb.or([eb('e.backoff_until', 'is', null), eb('e.backoff_until', '<=', at)]))
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('webhook_deliveries as d')
          .select('d.id')
          .whereRef('d.endpoint_id', '=', 'e.id')
          .where('d.state', '=', 'pending')
          .where('d.next_attempt_at', '<=', at)
          .where((w) => w.or([w('d.lease_until', 'is', null), w('d.lease_until', '<=', at)])),
      ),
    )
    // Not full already (counted again below, once the endpoint is this claimer's).
    .where(
      (eb) =>
        eb
          .selectFrom('webhook_deliveries as d')
          .select((c) => c.fn.countAll<number>().as('n'))
          .whereRef('d.endpoint_id', '=', 'e.id')
          .where('d.state', '=', 'pending')
          .where('d.lease_until', '>', at),
      '<',
      perEndpoint,
    )
    .orderBy(sql`coalesce(e.claimed_at, '')`)
    .orderBy('e.id')
    // More endpoints than slots, so that the turns across organisations have some to choose from.
    .limit(slots * 4)
  const found = await candidates.execute()
  // One claimer per endpoint at a time: instances claiming at once skip each other's endpoints
  // instead of waiting. A lock only claimers take (a row lock on the endpoint would also be met
  // by every queued event's foreign-key check and every recorded attempt), held to commit.
  const ids = found.map((endpoint) => endpoint.id)
  const locked = new Set(await locks.tryLock(db, 'webhook-claim:', ids))
  const endpoints = found.filter((endpoint) => locked.has(endpoint.id))
  const skipped = found.length - endpoints.length
  if (endpoints.length === 0) return { due: [], claimed: 0, skipped }
  // Counted again now that the endpoints are this claimer's: a claim committed meanwhile is seen.
  const sending = new Map(
    (
      await db
        .selectFrom('webhook_deliveries')
        .select(['endpoint_id', (eb) => eb.fn.countAll<number | string>().as('n')])
        .where(
          'endpoint_id',
          'in',
          endpoints.map((endpoint) => endpoint.id),
        )
        .where('state', '=', 'pending')
        .where('lease_until', '>', at)
        .groupBy('endpoint_id')
        .execute()
    ).map((row) => [row.endpoint_id, Number(row.n)]),
  )
  // One slot per endpoint per turn, until the slots or the endpoints' room run out.
  const turns = byOrganisationTurns(endpoints)
  const wanted = new Map<string, number>()
  for (let left = slots, given = true; left > 0 && given; ) {
    given = false
    for (const endpoint of turns) {
      if (left === 0) break
      const want = wanted.get(endpoint.id) ?? 0
      if ((sending.get(endpoint.id) ?? 0) + want >= perEndpoint) continue
      wanted.set(endpoint.id, want + 1)
      left--
      given = true
    }
  }
  if (wanted.size === 0) return { due: [], claimed: 0, skipped }
  const lease = isoAt(now + leaseMs)
  const claimedIds: string[] = []
  for (const [endpointId, take] of wanted) {
    const oldest = db
      .selectFrom('webhook_deliveries as d')
      .select('d.id')
      .where('d.endpoint_id', '=', endpointId)
      .where('d.state', '=', 'pending')
      .where('d.next_attempt_at', '<=', at)
      .where((eb) => eb.or([eb('d.lease_until', 'is', null), eb('d.lease_until', '<=', at)]))
      .orderBy('d.next_attempt_at')
      .orderBy('d.id')
      .limit(take)
    const taken = await db
      .updateTable('webhook_deliveries')
      .set({ lease_until: lease })
      .where('id', 'in', oldest)
      // Again on the row itself: PostgreSQL checks these on a row another transaction just changed.
      .where('state', '=', 'pending')
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', at)]))
      .returning('id')
      .execute()
    claimedIds.push(...taken.map((row) => row.id))
  }
  await db
    .updateTable('webhook_endpoints')
    .set({ claimed_at: at })
    .where('id', 'in', [...wanted.keys()])
    .execute()
  if (claimedIds.length === 0) return { due: [], claimed: 0, skipped }
  const rows = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .selectAll('d')
    .select(['e.url', 'e.secret', 'e.previous_secret', 'e.previous_secret_until', 'e.organisation_id'])
    .select(accessRefusal(sql.ref('d.student_id'), at).as('refusal'))
    .where('d.id', 'in', claimedIds)
    .execute()
  const due: DueDelivery[] = []
  for (const { refusal, ...delivery } of rows) {
    // A notice asks the partner to delete what it holds: it goes out whatever the access now.
    if (delivery.student_id === null || refusal === null || isNoticeEvent(delivery.event_type)) {
      due.push(delivery)
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
  return { due, claimed: claimedIds.length, skipped }
}

/** One delivery attempt's outcome, as the sender reports it and the outbox records it. */
export interface AttemptRecord {
  /** A 2xx answer. */
  ok: boolean
  status: number | null
  latencyMs: number
  /** Why there was no answer, or why the URL was refused. */
  error: string | null
  /** The start of the answer's body, at most 1 KB. */
  response: string
  /**
   * The whole body was written to the connection, whatever came back (an error status, a
   * timeout, a reset): the receiver may have read it.
   */
  bodySent: boolean
}

/**
 * Writes an attempt's outcome. The first attempt whose body was sent marks the delivery and,
 * for a student's data, writes its one disclosure row, whichever instance sent it and whether
 * or not it still holds the lease (the receiver has the data either way). The rest is written
 * only if this instance still holds the lease: delivered, or scheduled again, or failed for
 * good. An attempt that timed out (after `timeoutMs`) makes the endpoint back off; an answer
 * ends that. An endpoint that has failed for three days is disabled (`disabled`: by this attempt).
 * Run it in a transaction.
 */
export async function recordAttempt(
  trx: Db,
  delivery: DueDelivery,
  attempt: AttemptRecord,
  now: number,
  timeoutMs: number,
): Promise<{ disabled: boolean }> {
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
  if (Number(updated.numUpdatedRows) === 0) return { disabled: false }
  if (attempt.error === 'timed out') {
    // Left alone for a while: deliveries queued behind a hanging endpoint wait, and hold no slot.
    const counted = await trx
      .updateTable('webhook_endpoints')
      .set((eb) => ({ timeouts: eb('timeouts', '+', 1) }))
      .where('id', '=', delivery.endpoint_id)
      .returning('timeouts')
      .executeTakeFirst()
    await trx
      .updateTable('webhook_endpoints')
      .set({ backoff_until: isoAt(now + timeoutBackoffMs(Number(counted?.timeouts ?? 1), timeoutMs)) })
      .where('id', '=', delivery.endpoint_id)
      .execute()
  } else if (attempt.status !== null) {
    await trx
      .updateTable('webhook_endpoints')
      .set({ timeouts: 0, backoff_until: null })
      .where('id', '=', delivery.endpoint_id)
      .where('timeouts', '>', 0)
      .execute()
  }
  if (attempt.ok) {
    await trx
      .updateTable('webhook_endpoints')
      .set({ failing_since: null })
      .where('id', '=', delivery.endpoint_id)
      .execute()
    return { disabled: false }
  }
  await trx
    .updateTable('webhook_endpoints')
    .set({ failing_since: sql`coalesce(failing_since, ${isoAt(now)})` })
    .where('id', '=', delivery.endpoint_id)
    .execute()
  const disabled = await trx
    .updateTable('webhook_endpoints')
    .set({ status: 'disabled', disabled_reason: DISABLED_AFTER_FAILING })
    .where('id', '=', delivery.endpoint_id)
    .where('status', '=', 'enabled')
    .where('failing_since', '<=', isoAt(now - DISABLE_AFTER_FAILING_MS))
    .executeTakeFirst()
  // Counted only when this attempt disabled it, so its notice is sent once.
  return { disabled: Number(disabled.numUpdatedRows) > 0 }
}

export const DISABLED_AFTER_FAILING = 'Every delivery failed for three days; fix the endpoint, then enable it again.'
