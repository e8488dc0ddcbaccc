/**
 * `curriculum org ...`: partner organisations. Suspending one refuses its keys at once (on the
 * next access poll) without revoking them, so a reinstatement needs no new keys; it shows what
 * stops and asks first (confirm.ts).
 */
import type { Command } from 'commander'
import { defineGroup } from '../../options.js'
import { defineOrgCreate } from './create.js'
import { defineOrgList } from './list.js'
import { defineOrgReinstate } from './reinstate.js'
import { defineOrgSuspend } from './suspend.js'

export function defineOrg(program: Command): void {
  const org = defineGroup(
    program,
    'org',
    'Manage partner organisations',
    'curriculum org create --name "Acme Learning"',
  )
  defineOrgCreate(org)
  defineOrgList(org)
  defineOrgSuspend(org)
  defineOrgReinstate(org)
}
