/**
 * Creating and revoking API keys: a partner's own keys (the dashboard), any key (the operator's
 * CLI, audited by the command) and an organisation's key from its page (the operator's
 * dashboard, audited here). The key limit and the access change a revocation records are the
 * repository's (storage/access-repository.ts).
 */
import type { Kysely } from 'kysely'
import type { Clock } from '../clock.js'
import { createApiKey, type NewKey, revokeApiKey } from '../storage/access-repository.js'
import type { ApiKeyRow, Database } from '../storage/tables.js'
import { auditedChange } from './operator-audit.js'

/** Creates a key; the returned `key` is the only time the secret exists outside the caller. */
export function createKey(db: Kysely<Database>, spec: NewKey, now: number): Promise<{ row: ApiKeyRow; key: string }> {
  return createApiKey(db, spec, now)
}

/** Revokes a key named by id or by its display prefix; revoking twice keeps the first time. */
export function revokeKey(db: Kysely<Database>, idOrPrefix: string, now: number): Promise<ApiKeyRow> {
  return revokeApiKey(db, idOrPrefix, now)
}

/** The operator revokes one of an organisation's keys: the revocation and its audit row, in one transaction. */
export async function revokeOrganisationKey(
  db: Kysely<Database>,
  revocation: { key: ApiKeyRow; organisation: string; actor: string },
  clock: Clock,
): Promise<void> {
  const { key, organisation, actor } = revocation
  await auditedChange(
    db,
    (trx) => revokeApiKey(trx, key.id, clock.now()),
    () => ({
      actor,
      action: 'key.revoke',
      target: `key:${key.id}`,
      detail: { organisation, prefix: key.display_prefix, name: key.name },
    }),
    clock,
  )
}
