/**
 * `curriculum key ...`: API keys. A key is shown once, when it is created; only its SHA-256 is
 * stored, so neither a listing nor a leaked database can reveal one.
 */
import type { Command } from 'commander'
import { defineGroup } from '../../options.js'
import { defineKeyCreate } from './create.js'
import { defineKeyList } from './list.js'
import { defineKeyRevoke } from './revoke.js'
import { defineKeyRoll } from './roll.js'

export function defineKey(program: Command): void {
  const key = defineGroup(
    program,
    'key',
    'Create, list, roll and revoke API keys',
    'curriculum key list --org "Acme Learning"',
  )
  defineKeyCreate(key)
  defineKeyList(key)
  defineKeyRoll(key)
  defineKeyRevoke(key)
}
