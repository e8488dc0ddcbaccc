/**
 * Organisations, their data-sharing agreements and their API keys. Every change that can make a
 * cached key record wrong (a revocation, a suspension, and in cases/ an agreement recorded or
 * ended) is written to the access change log in the same transaction, so running instances evict
 * just the keys concerned within one poll interval. Creating a key or an organisation records nothing:
 * no instance can have cached a key that did not exist.
 */
import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import { agreementWindow } from '../domain/agreements.js'
import { generateApiKey, type KeyMode, type KeyRecord } from '../domain/api-key.js'
import type { OrganisationStatus } from '../domain/application-state.js'
import { formatScopes, type Scope, scopeBits } from '../domain/scopes.js'
import type { AgreementRow, ApiKeyRow, Database, OrganisationKind, OrganisationRow } from './tables.js'
import { recordAccessChange } from './access-change-repository.js'
import { preparedBySize, preparedQuery } from './prepared-query.js'
import { inTransaction } from './transaction.js'
import { ConflictError, NotFoundError } from '../domain/errors.js'
import { UUID } from '../domain/uuid.js'

/** The organisation already has as many active keys as it may; nothing was created. */
export class KeyLimitError extends ConflictError {
  override name = 'KeyLimitError'
  constructor(readonly limit: number) {
    super(`the organisation already has ${limit} active keys, the most it may have; revoke one it no longer uses first`)
  }
}

export interface OrganisationOptions {
  /** `partner` (default) or `sandbox`. */
  kind?: 'partner' | 'sandbox'
  /** Scopes its keys may carry; both student scopes by default. */
  allowedScopes?: readonly Scope[]
}

export async function createOrganisation(
  db: Kysely<Database>,
  name: string,
  now: number,
  options: OrganisationOptions = {},
): Promise<OrganisationRow> {
  const trimmed = name.trim()
  if (trimmed === '' || trimmed.length > 120)
    throw new ConflictError('an organisation name must have 1 to 120 characters')
  return inTransaction(db, async (trx) => {
    const existing = await trx.selectFrom('organisations').select('id').where('name', '=', trimmed).executeTakeFirst()
    if (existing !== undefined)
      throw new ConflictError(`an organisation named "${trimmed}" already exists (${existing.id})`)
    const row: OrganisationRow = {
      id: randomUUID(),
      name: trimmed,
      status: 'active',
      created_at: isoAt(now),
      kind: options.kind ?? 'partner',
      allowed_scopes: formatScopes(options.allowedScopes ?? ['students:read', 'students:write']),
      require_second_factor: 0,
    }
    await trx.insertInto('organisations').values(row).execute()
    return row
  })
}

/** An organisation by id or by exact name. */
export async function findOrganisation(db: Kysely<Database>, idOrName: string): Promise<OrganisationRow> {
  const query = db.selectFrom('organisations').selectAll()
  const row = await (UUID.test(idOrName)
    ? query.where('id', '=', idOrName.toLowerCase())
    : query.where('name', '=', idOrName)
  ).executeTakeFirst()
  if (row === undefined) throw new NotFoundError(`no organisation "${idOrName}"`)
  return row
}

export async function listOrganisations(db: Kysely<Database>): Promise<OrganisationRow[]> {
  return db.selectFrom('organisations').selectAll().orderBy('created_at').orderBy('name').execute()
}

/** The organisation with this id, if it is of `kind` when one is given. */
export async function organisationById(
  db: Kysely<Database>,
  id: string,
  kind?: OrganisationKind,
): Promise<OrganisationRow | undefined> {
  let query = db.selectFrom('organisations').selectAll().where('id', '=', id)
  if (kind !== undefined) query = query.where('kind', '=', kind)
  return query.executeTakeFirst()
}

/** Alphabetical, as people look names up in a list or a menu. */
export async function listOrganisationsByName(
  db: Kysely<Database>,
  kind?: OrganisationKind,
): Promise<OrganisationRow[]> {
  let query = db.selectFrom('organisations').selectAll()
  if (kind !== undefined) query = query.where('kind', '=', kind)
  return query.orderBy('name').execute()
}

/** Writes an agreement as recorded (cases/agreement-record.ts checks it first). */
export async function insertAgreement(trx: Kysely<Database>, row: AgreementRow): Promise<void> {
  await trx.insertInto('agreements').values(row).execute()
}

/** Sets `at` as the end of one agreement, or of every agreement of an organisation, that has not ended yet. */
export async function markAgreementsEnded(
  trx: Kysely<Database>,
  target: { agreementId: string } | { organisationId: string },
  at: string,
): Promise<AgreementRow[]> {
  let query = trx.updateTable('agreements').set({ ended_at: at }).where('ended_at', 'is', null)
  query =
    'agreementId' in target
      ? query.where('id', '=', target.agreementId)
      : query.where('organisation_id', '=', target.organisationId)
  return query.returningAll().execute()
}

export async function listAgreements(db: Kysely<Database>, organisationId?: string): Promise<AgreementRow[]> {
  let query = db.selectFrom('agreements').selectAll()
  if (organisationId !== undefined) query = query.where('organisation_id', '=', organisationId)
  return query.orderBy('signed_at').execute()
}

export interface NewKey {
  organisationId: string
  name: string
  scopes: readonly Scope[]
  expiresAt: number | null
  mode?: KeyMode
  /** The dashboard account creating it, if any. */
  createdBy?: string
}

/**
 * Keys of an organisation that still work at `now` (`keyState` in SQL: any revocation, or expiry
 * at or before now), rolled keys left out: a roll replaces a key, so it never meets the cap.
 */
export async function countActiveKeys(db: Kysely<Database>, organisationId: string, now: number): Promise<number> {
  const row = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('organisation_id', '=', organisationId)
    .where('revoked_at', 'is', null)
    .where('rolled_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', isoAt(now))]))
    .executeTakeFirstOrThrow()
  return Number(row.count)
}

/**
 * A new key's row and its secret, not stored yet (ConflictError if it would expire at once); the
 * returned `key` is the only time the secret exists outside the caller.
 */
export function newApiKey(spec: NewKey, now: number): { row: ApiKeyRow; key: string } {
  if (spec.expiresAt !== null && spec.expiresAt <= now) throw new ConflictError('a key must expire in the future')
  const secret = generateApiKey(spec.mode ?? 'live')
  const row: ApiKeyRow = {
    id: randomUUID(),
    organisation_id: spec.organisationId,
    name: spec.name.trim() || 'unnamed',
    display_prefix: secret.displayPrefix,
    key_hash: secret.hash,
    scopes: formatScopes(spec.scopes),
    mode: spec.mode ?? 'live',
    created_at: isoAt(now),
    expires_at: spec.expiresAt === null ? null : isoAt(spec.expiresAt),
    revoked_at: null,
    last_used_at: null,
    created_by: spec.createdBy ?? null,
    rolled_at: null,
    replaced_by: null,
    last_used_address: null,
    last_used_agent: null,
  }
  return { row, key: secret.key }
}

export async function insertApiKey(db: Kysely<Database>, row: ApiKeyRow): Promise<void> {
  await db.insertInto('api_keys').values(row).execute()
}

/** Creates a key with no cap on the organisation's keys (seed data, a sandbox's first key, fixtures). */
export async function createApiKey(
  db: Kysely<Database>,
  spec: NewKey,
  now: number,
): Promise<{ row: ApiKeyRow; key: string }> {
  const created = newApiKey(spec, now)
  await insertApiKey(db, created.row)
  return created
}

/**
 * Holds the organisation's row until `trx` ends, so that a count and the change it allows are one
 * step: this no-op update locks the row on PostgreSQL (a concurrent transaction waits here, then
 * counts after this one committed); SQLite transactions are BEGIN IMMEDIATE
 * (sqlite/immediate-transactions.ts), so they run one at a time anyway. False if there is no such
 * organisation.
 */
export async function lockOrganisation(trx: Kysely<Database>, organisationId: string): Promise<boolean> {
  const locked = await trx
    .updateTable('organisations')
    .set((eb) => ({ status: eb.ref('status') }))
    .where('id', '=', organisationId)
    .executeTakeFirst()
  return Number(locked.numUpdatedRows) > 0
}

export async function listApiKeys(db: Kysely<Database>, organisationId?: string): Promise<ApiKeyRow[]> {
  let query = db.selectFrom('api_keys').selectAll()
  if (organisationId !== undefined) query = query.where('organisation_id', '=', organisationId)
  return query.orderBy('created_at').execute()
}

export async function findApiKey(db: Kysely<Database>, id: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst()
}

/** The key named by its id or its display prefix; NotFoundError, or ConflictError when a prefix names several. */
export async function keyNamed(db: Kysely<Database>, idOrPrefix: string): Promise<ApiKeyRow> {
  const matches = await db
    .selectFrom('api_keys')
    .selectAll()
    .where((eb) =>
      UUID.test(idOrPrefix) ? eb('id', '=', idOrPrefix.toLowerCase()) : eb('display_prefix', '=', idOrPrefix),
    )
    .execute()
  if (matches.length === 0) throw new NotFoundError(`no key "${idOrPrefix}"`)
  if (matches.length > 1) throw new ConflictError(`"${idOrPrefix}" matches ${matches.length} keys; use the key id`)
  return matches[0]!
}

/** Revokes a key named by id or by its display prefix; revoking twice keeps the first time. */
export async function revokeApiKey(db: Kysely<Database>, idOrPrefix: string, now: number): Promise<ApiKeyRow> {
  return inTransaction(db, async (trx) => {
    const key = await keyNamed(trx, idOrPrefix)
    if (key.revoked_at !== null) return key
    const revoked = { ...key, revoked_at: isoAt(now) }
    await trx.updateTable('api_keys').set({ revoked_at: revoked.revoked_at }).where('id', '=', key.id).execute()
    await recordAccessChange(trx, { kind: 'key_revoked', keyId: key.id, organisationId: key.organisation_id })
    return revoked
  })
}

/**
 * Marks a key rolled, replaced by `replacedBy`, working until `end` (or until its own expiry if
 * sooner); false, changing nothing, if it was revoked, rolled or had expired meanwhile. The
 * conditional update is what makes two rolls of one key at once leave one replacement.
 */
export async function markKeyRolled(
  trx: Kysely<Database>,
  roll: { keyId: string; organisationId: string; replacedBy: string; end: number },
  now: number,
): Promise<boolean> {
  const end = isoAt(roll.end)
  const updated = await trx
    .updateTable('api_keys')
    .set((eb) => ({
      rolled_at: isoAt(now),
      replaced_by: roll.replacedBy,
      expires_at: eb
        .case()
        .when(eb.and([eb('expires_at', 'is not', null), eb('expires_at', '<', end)]))
        .then(eb.ref('expires_at'))
        .else(end)
        .end(),
    }))
    .where('id', '=', roll.keyId)
    .where('revoked_at', 'is', null)
    .where('rolled_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', isoAt(now))]))
    .executeTakeFirst()
  if (Number(updated.numUpdatedRows) === 0) return false
  await recordAccessChange(trx, { kind: 'key_rolled', keyId: roll.keyId, organisationId: roll.organisationId })
  return true
}

const keyByHashQuery = preparedQuery((db, hash: string) =>
  db
    .selectFrom('api_keys as k')
    .innerJoin('organisations as o', 'o.id', 'k.organisation_id')
    .leftJoin('agreements as a', 'a.organisation_id', 'k.organisation_id')
    .select([
      'k.id as keyId',
      'k.organisation_id as organisationId',
      'o.status as organisationStatus',
      'o.kind as organisationKind',
      'k.mode as mode',
      'k.scopes as scopes',
      'k.expires_at as expiresAt',
      'k.revoked_at as revokedAt',
      'k.rolled_at as rolledAt',
      'a.signed_at as signedAt',
      'a.expires_at as agreementExpiresAt',
      'a.ended_at as agreementEndedAt',
    ])
    .where('k.key_hash', '=', hash),
)

export async function findKeyByHash(db: Kysely<Database>, hash: string): Promise<KeyRecord | undefined> {
  const rows = await keyByHashQuery(db, hash)
  const first = rows[0]
  if (first === undefined) return undefined
  const agreements = rows
    .filter((row) => row.signedAt !== null)
    .map((row) => agreementWindow(row.signedAt!, row.agreementExpiresAt, row.agreementEndedAt))
  return {
    keyId: first.keyId,
    organisation: {
      id: first.organisationId,
      active: first.organisationStatus === 'active',
      agreements,
    },
    sandbox: first.mode === 'test' && first.organisationKind === 'sandbox',
    scopes: scopeBits(first.scopes.split(' ')),
    expiresAt: first.expiresAt === null ? null : Date.parse(first.expiresAt),
    revokedAt: first.revokedAt === null ? null : Date.parse(first.revokedAt),
    rolledAt: first.rolledAt === null ? null : Date.parse(first.rolledAt),
  }
}

/** Keys per statement at most: the flush's chunks (key-usage.ts) fit in one. */
const TOUCH_KEYS = 64

/** A key's last use as the flush writes it: when, and the client address and user agent family then. */
export interface LastUse {
  at: number
  address: string
  agent: string
}

/**
 * The update of `size` keys' last uses; its arguments are each key's id, time, address and agent
 * (the ids serve the WHERE too: a prepared query puts an argument wherever the query uses it).
 */
const touchStatement = preparedBySize(
  (size) =>
    (db, ...args: string[]) =>
      db
        .updateTable('api_keys')
        .set((eb) => {
          const column = (field: number) => {
            let values = eb.case('id').when(args[0]!).then(args[field]!)
            for (let i = 1; i < size; i++) values = values.when(args[4 * i]!).then(args[4 * i + field]!)
            return values.end()
          }
          return { last_used_at: column(1), last_used_address: column(2), last_used_agent: column(3) }
        })
        .where(
          'id',
          'in',
          Array.from({ length: size }, (_, i) => args[4 * i]!),
        ),
)

/**
 * Records keys' last uses; called with a few dozen keys at a time, off the request path.
 * One statement for up to TOUCH_KEYS of them: on PostgreSQL one round trip, on SQLite one
 * statement to run.
 * Compiled once per count of keys: building it anew (a CASE of 64 branches) cost more than
 * running it, and a flush of many keys writes many such chunks (figures: docs/performance.md).
 */
export async function touchKeys(db: Kysely<Database>, lastUsed: ReadonlyMap<string, LastUse>): Promise<void> {
  const entries = [...lastUsed]
  // More keys than that go in several statements, so that few sizes are ever compiled.
  for (let start = 0; start < entries.length; start += TOUCH_KEYS) {
    const chunk = entries.slice(start, start + TOUCH_KEYS)
    const args: string[] = []
    for (const [keyId, use] of chunk) args.push(keyId, isoAt(use.at), use.address, use.agent)
    await touchStatement(chunk.length)(db, ...args)
  }
}

export type { OrganisationStatus } from '../domain/application-state.js'

/**
 * Suspends or reinstates an organisation. A suspended organisation's keys are refused until it
 * is reinstated; its agreements and keys are kept as they are. Setting the status it already
 * has changes nothing and records no change.
 */
export async function setOrganisationStatus(
  db: Kysely<Database>,
  organisationId: string,
  status: OrganisationStatus,
): Promise<{ organisation: OrganisationRow; changed: boolean }> {
  return inTransaction(db, async (trx) => {
    const row = await trx.selectFrom('organisations').selectAll().where('id', '=', organisationId).executeTakeFirst()
    if (row === undefined) throw new NotFoundError(`no organisation "${organisationId}"`)
    if (row.status === status) return { organisation: row, changed: false }
    await trx.updateTable('organisations').set({ status }).where('id', '=', row.id).execute()
    await recordAccessChange(trx, { kind: 'organisation_status', organisationId: row.id })
    return { organisation: { ...row, status }, changed: true }
  })
}
