/**
 * A partner's webhook endpoints: registered with a signing secret shown once, rolled, disabled
 * and enabled. An organisation has at most MAX_WEBHOOK_ENDPOINTS_PER_ORGANISATION enabled
 * endpoints: each may hold sending slots of every instance, so without a cap more endpoints
 * would mean a larger share of them.
 */
import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import type { KeyMode } from '../domain/api-key.js'
import type { SubscribableEvent } from '../domain/webhook-events.js'
import { generateWebhookSecret } from '../domain/webhook-signature.js'
import { ConflictError } from '../domain/errors.js'
import type { Database, WebhookEndpointRow } from './tables.js'
import { inTransaction } from './transaction.js'

type Db = Kysely<Database>

export class EndpointLimitError extends ConflictError {
  override name = 'EndpointLimitError'
  constructor(readonly limit: number) {
    super(`the organisation already has ${limit} enabled webhook endpoints, the most it may have`)
  }
}

/** How long the previous secret still signs after a roll, so receivers can switch without missing a delivery. */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 60 * 60 * 1000

export interface NewEndpoint {
  organisationId: string
  mode: KeyMode
  url: string
  events: readonly SubscribableEvent[]
  createdBy?: string
  /** Enabled endpoints the organisation may have; none when absent. */
  maxEnabled?: number
}

/**
 * Throws EndpointLimitError if the organisation already has `max` enabled endpoints. Run it in
 * the transaction that adds or enables one: count and change must be one step, or two at 9 of 10
 * both pass. This no-op update locks the organisation's row until commit on PostgreSQL (the
 * other waits, then counts after this one committed); SQLite transactions run one at a time.
 */
async function checkRoom(trx: Db, organisationId: string, max: number | undefined): Promise<void> {
  if (max === undefined) return
  await trx
    .updateTable('organisations')
    .set((eb) => ({ status: eb.ref('status') }))
    .where('id', '=', organisationId)
    .execute()
  const { count } = await trx
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('organisation_id', '=', organisationId)
    .where('status', '=', 'enabled')
    .executeTakeFirstOrThrow()
  if (Number(count) >= max) throw new EndpointLimitError(max)
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
  await inTransaction(db, async (trx) => {
    await checkRoom(trx, spec.organisationId, spec.maxEnabled)
    await trx.insertInto('webhook_endpoints').values(endpoint).execute()
  })
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

/** Disables or enables an endpoint; enabling one past `maxEnabled` throws EndpointLimitError. */
export async function setEndpointEnabled(
  db: Db,
  endpoint: Pick<WebhookEndpointRow, 'id' | 'organisation_id'>,
  enabled: boolean,
  maxEnabled?: number,
): Promise<void> {
  await inTransaction(db, async (trx) => {
    if (enabled) {
      const current = await trx
        .selectFrom('webhook_endpoints')
        .select('status')
        .where('id', '=', endpoint.id)
        .executeTakeFirst()
      if (current?.status === 'enabled') return
      await checkRoom(trx, endpoint.organisation_id, maxEnabled)
    }
    await trx
      .updateTable('webhook_endpoints')
      .set(
        enabled
          ? { status: 'enabled', disabled_reason: null, failing_since: null }
          : { status: 'disabled', disabled_reason: 'Disabled by your organisation.' },
      )
      .where('id', '=', endpoint.id)
      .execute()
  })
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
