/**
 * Creating and revoking API keys: a partner's own keys (the dashboard), any key (the operator's
 * CLI, audited by the command) and an organisation's key from its page (the operator's
 * dashboard, audited here). An organisation holds at most MAX_KEYS_PER_ORGANISATION active keys:
 * every key has its own rate limit, so an unlimited number of keys would multiply its share.
 */
import type { Kysely } from 'kysely'
import type { Clock } from '../clock.js'
import { keyRowState } from '../domain/api-key.js'
import { ConflictError, NotFoundError } from '../domain/errors.js'
import {
  countActiveKeys,
  createApiKey,
  findApiKey,
  insertApiKey,
  KeyLimitError,
  lockOrganisation,
  markKeyRolled,
  type NewKey,
  newApiKey,
  revokeApiKey,
} from '../storage/access-repository.js'
import type { ApiKeyRow, Database } from '../storage/tables.js'
import { inTransaction } from '../storage/transaction.js'
import { isScope } from '../domain/scopes.js'
import { auditOperator, type OperatorAudit } from './operator-action.js'

export interface CappedKey extends NewKey {
  /**
   * Refuse with KeyLimitError when the organisation already has this many active keys (neither
   * revoked nor expired). Left out: no cap.
   */
  maxActiveKeys?: number
}

/** Creates a key; the returned `key` is the only time the secret exists outside the caller. */
export async function createKey(
  db: Kysely<Database>,
  spec: CappedKey,
  now: number,
): Promise<{ row: ApiKeyRow; key: string }> {
  return inTransaction(db, async (trx) => {
    if (spec.maxActiveKeys !== undefined) {
      // Count and insert must be one step, or two creations at 9 of 10 both succeed.
      if (!(await lockOrganisation(trx, spec.organisationId)))
        throw new NotFoundError(`no organisation "${spec.organisationId}"`)
      if ((await countActiveKeys(trx, spec.organisationId, now)) >= spec.maxActiveKeys)
        throw new KeyLimitError(spec.maxActiveKeys)
    }
    return createApiKey(trx, spec, now)
  })
}

/** Revokes a key named by id or by its display prefix; revoking twice keeps the first time. */
export function revokeKey(db: Kysely<Database>, idOrPrefix: string, now: number): Promise<ApiKeyRow> {
  return revokeApiKey(db, idOrPrefix, now)
}

export interface KeyRoll {
  /** The key to roll, as read before (its name, scopes, mode and organisation go to the new key). */
  key: ApiKeyRow
  /** When the old key stops; at or before `now` it is revoked at once (a leaked key). */
  end: number
  /** The dashboard account rolling it, if any. */
  createdBy?: string
}

/**
 * Rolls a key: a new key with the old one's name, scopes, mode and organisation (and no expiry),
 * and the old one working until `end`, or revoked at once when `end` is not ahead. Both in one
 * transaction; ConflictError if the key was revoked, rolled or had expired (also when another
 * roll of it won a race). The returned `key` is the only time the new secret exists outside.
 */
export async function rollKey(
  db: Kysely<Database>,
  roll: KeyRoll,
  now: number,
): Promise<{ old: ApiKeyRow; row: ApiKeyRow; key: string }> {
  const { key: old, end } = roll
  const state = keyRowState(old, now)
  if (state !== 'active')
    throw new ConflictError(`the key ${old.display_prefix}… is ${state}: only a key in force rolls`)
  if (old.rolled_at !== null) throw new ConflictError(`the key ${old.display_prefix}… was rolled already`)
  const spec: NewKey = {
    organisationId: old.organisation_id,
    name: old.name,
    scopes: old.scopes.split(' ').filter(isScope),
    expiresAt: null,
    mode: old.mode,
    ...(roll.createdBy === undefined ? {} : { createdBy: roll.createdBy }),
  }
  return inTransaction(db, async (trx) => {
    const created = newApiKey(spec, now)
    await insertApiKey(trx, created.row)
    const rolled = { keyId: old.id, organisationId: old.organisation_id, replacedBy: created.row.id, end }
    if (!(await markKeyRolled(trx, rolled, now)))
      throw new ConflictError(`the key ${old.display_prefix}… was revoked, rolled or expired meanwhile`)
    if (end <= now) await revokeApiKey(trx, old.id, now)
    const after = await findApiKey(trx, old.id)
    return { old: after!, ...created }
  })
}

/** The operator revokes one of an organisation's keys: the revocation and its audit row, in one transaction. */
export async function revokeOrganisationKey(
  db: Kysely<Database>,
  revocation: { key: ApiKeyRow; organisation: string },
  audit: OperatorAudit,
  clock: Clock,
): Promise<void> {
  const { key, organisation } = revocation
  await inTransaction(db, async (trx) => {
    await revokeApiKey(trx, key.id, clock.now())
    const detail = { organisation, prefix: key.display_prefix, name: key.name }
    await auditOperator(trx, audit, { action: 'key.revoke', target: `key:${key.id}`, detail }, clock.now())
  })
}
