/**
 * `curriculum org suspend`: the organisation's keys are refused at once (on the next access poll)
 * without being revoked, so a reinstatement needs no new keys; it shows what stops and asks first
 * (confirm.ts).
 */
import type { Command } from 'commander'
import type { Kysely } from 'kysely'
import { systemClock } from '../../../clock.js'
import type { Database } from '../../../storage/tables.js'
import type { Audit } from '../../audit.js'
import { act } from '../../command-action.js'
import { confirmChange, type PendingChange, withConfirmation } from '../../confirm.js'
import { defineCommand } from '../../options.js'
import { type CommandResult, plural } from '../../output.js'
import { withStorage } from '../../storage-session.js'
import { changeStatus } from './status-change.js'
import { organisationJson } from './views.js'

export function defineOrgSuspend(org: Command): void {
  const command = defineCommand(
    org,
    'suspend <organisation>',
    'Suspend an organisation: its keys are refused until it is reinstated. Shows what stops and asks first.',
    [
      'curriculum org suspend "Acme Learning"                 # shows what stops, asks',
      'curriculum org suspend "Acme Learning" --dry-run',
      'curriculum org suspend 0b7f3a52-6c1e-4d1a-9f55-2f7f0c7e8a10 --yes --json',
    ],
    { audit: 'organisation.suspend' },
  )
  // Suspending ends every integration of the partner within seconds: it asks first, as the dashboard does.
  withConfirmation(command, 'suspend it')
  command.action(act(suspend))
}

async function suspend(command: Command, audit: Audit): Promise<CommandResult> {
  const [idOrName] = command.processedArgs as [string]
  const confirmed = await confirmChange(command, await withStorage(({ storage }) => suspension(storage.db, idOrName)))
  if (!confirmed.write) return confirmed.result
  return changeStatus(audit, idOrName, 'suspended')
}

/** What suspending would stop: the organisation's keys in force. Reads only. */
async function suspension(db: Kysely<Database>, idOrName: string): Promise<PendingChange> {
  const { findOrganisation, listApiKeys } = await import('../../../storage/access-repository.js')
  const { keyRowState } = await import('../../../domain/api-key.js')
  const organisation = await findOrganisation(db, idOrName)
  const now = systemClock.now()
  const keys = (await listApiKeys(db, organisation.id)).filter((key) => keyRowState(key, now) === 'active').length
  const active = organisation.status === 'active'
  return {
    lines: active
      ? [
          `suspend ${organisation.name} (${organisation.id}), ${plural(keys, 'key')} in force: every request with ` +
            'any of its keys gets 403 organisation_suspended within seconds, on every instance, and its partners ' +
            'cannot create live keys; nothing is deleted, and reinstating it makes its keys work again',
        ]
      : [],
    data: { preview: { organisation: organisationJson(organisation), keysInForce: keys } },
    ends: active,
    action: 'suspend it',
  }
}
