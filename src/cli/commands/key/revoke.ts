/** `curriculum key revoke`: an API key stops working at once (cases/api-keys.ts). */
import type { Command } from 'commander'
import { isoAt, systemClock } from '../../../clock.js'
import type { Audit } from '../../audit.js'
import { act } from '../../command-action.js'
import { defineCommand } from '../../options.js'
import type { CommandResult } from '../../output.js'
import { keyJson } from './views.js'

export function defineKeyRevoke(key: Command): void {
  defineCommand(
    key,
    'revoke <key>',
    'Revoke an API key, named by its id or display prefix; it stops working at once',
    ['curriculum key revoke cur_live_AbC123', 'curriculum key revoke 7c9e6679-7425-40de-944b-e07fc1f90ae7 --json'],
    { audit: 'key.revoke' },
  ).action(act(revoke))
}

async function revoke(command: Command, audit: Audit): Promise<CommandResult> {
  const [idOrPrefix] = command.processedArgs as [string]
  const now = systemClock.now()
  const row = await audit.change(async ({ db }) => {
    const { revokeKey } = await import('../../../cases/api-keys.js')
    // Listings show the prefix followed by an ellipsis; accept it pasted back as it is.
    const row = await revokeKey(db, idOrPrefix.replace(/…$/, ''), now)
    return {
      value: row,
      target: `key:${row.id}`,
      changed: {
        organisationId: row.organisation_id,
        name: row.name,
        prefix: row.display_prefix,
        revokedAt: row.revoked_at,
        alreadyRevoked: row.revoked_at !== isoAt(now),
      },
    }
  })
  const already = row.revoked_at !== isoAt(now)
  return {
    data: { key: keyJson(row), alreadyRevoked: already },
    text: already
      ? `key ${row.id} (${row.display_prefix}…) was already revoked at ${row.revoked_at}`
      : `revoked key ${row.id} (${row.display_prefix}…) at ${row.revoked_at}`,
  }
}
