/**
 * A partner's webhook endpoints: registered with a signing secret shown once, rolled, disabled
 * and enabled (cases/webhook-endpoints.ts holds the cap on enabled endpoints).
 */
import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import type { KeyMode } from '../domain/api-key.js'
import type { SubscribableEvent } from '../domain/webhook-events.js'
import { generateWebhookSecret } from '../domain/webhook-signature.js'
import { ConflictError } from '../domain/errors.js'
import type { Database, WebhookEndpointRow } from './tables.js'

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
}

/** The organisation's enabled endpoints. */
export async function countEnabledEndpoints(db: Db, organisationId: string): Promise<number> {
  const { count } = await db
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('organisation_id', '=', organisationId)
    .where('status', '=', 'enabled')
    .executeTakeFirstOrThrow()
  return Number(count)
}

/** A new endpoint's row and its signing secret, not stored yet; the secret is shown only this once. */
export function newEndpoint(spec: NewEndpoint, now: number): { endpoint: WebhookEndpointRow; secret: string } {
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
  return { endpoint, secret }
}

export async function insertEndpoint(db: Db, endpoint: WebhookEndpointRow): Promise<void> {
  await db.insertInto('webhook_endpoints').values(endpoint).execute()
}

/** Registers an endpoint; the cap on the organisation's endpoints is the caller's (cases/webhook-endpoints.ts). */
export async function createEndpoint(
  db: Db,
  spec: NewEndpoint,
  now: number,
): Promise<{ endpoint: WebhookEndpointRow; secret: string }> {
  const created = newEndpoint(spec, now)
  await insertEndpoint(db, created.endpoint)
  return created
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

export async function endpointStatus(db: Db, endpointId: string) {
  const row = await db.selectFrom('webhook_endpoints').select('status').where('id', '=', endpointId).executeTakeFirst()
  return row?.status
}

/** Enables the endpoint (forgetting why it was disabled and when it began failing), or disables it by request. */
export async function setEndpointStatus(db: Db, endpointId: string, enabled: boolean): Promise<void> {
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
