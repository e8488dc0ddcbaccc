/** `curriculum org reinstate`: a suspended organisation's keys work again. */
import type { Command } from 'commander'
import { act } from '../../command-action.js'
import { defineCommand } from '../../options.js'
import { changeStatus } from './status-change.js'

export function defineOrgReinstate(org: Command): void {
  defineCommand(
    org,
    'reinstate <organisation>',
    'Reinstate a suspended organisation: its keys work again',
    [
      'curriculum org reinstate "Acme Learning"',
      'curriculum org reinstate 0b7f3a52-6c1e-4d1a-9f55-2f7f0c7e8a10 --json',
    ],
    { audit: 'organisation.reinstate' },
  ).action(act((command, audit) => changeStatus(audit, (command.processedArgs as [string])[0], 'active')))
}
