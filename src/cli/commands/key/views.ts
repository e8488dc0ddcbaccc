/** A key as the `key` commands print it with --json. */
import { systemClock } from '../../../clock.js'
import { keyRowState } from '../../../domain/api-key.js'
import type { ApiKeyRow } from '../../../storage/tables.js'

/** Everything about a key except its secret and hash, which no listing ever shows. */
export function keyJson(row: ApiKeyRow, organisation?: string, now = systemClock.now()) {
  return {
    id: row.id,
    displayPrefix: row.display_prefix,
    name: row.name,
    organisationId: row.organisation_id,
    ...(organisation === undefined ? {} : { organisation }),
    scopes: row.scopes.split(' ').filter((scope) => scope !== ''),
    mode: row.mode,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    lastUsedAt: row.last_used_at,
    lastUsedAddress: row.last_used_address,
    lastUsedAgent: row.last_used_agent,
    rolledAt: row.rolled_at,
    replacedBy: row.replaced_by,
    state: keyRowState(row, now),
  }
}
