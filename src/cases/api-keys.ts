/**
 * Creating and revoking API keys: a partner's own keys (the dashboard), any key (the operator's
 * CLI, audited by the command) and an organisation's key from its page (the operator's
 * dashboard, audited here). An organisation holds at most MAX_KEYS_PER_ORGANISATION active keys:
 * every key has its own rate limit, so an unlimited number of keys would multiply its share.
 */
import type { Kysely } from 'kysely'
import type { Clock } from '../clock.js'
import { NotFoundError } from '../domain/errors.js'
import {
  countActiveKeys,
  createApiKey,
  KeyLimitError,
  lockOrganisation,
  type NewKey,
  revokeApiKey,
} from '../storage/access-repository.js'
import type { ApiKeyRow, Database } from '../storage/tables.js'
import { inTransaction } from '../storage/transaction.js'
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
