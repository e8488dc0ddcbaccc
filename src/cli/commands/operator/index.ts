/** `curriculum operator ...`: dashboard operator accounts, which exist only through this command. */
import type { Command } from 'commander'
import { defineGroup } from '../../options.js'
import { defineOperatorCreate } from './create.js'

export function defineOperator(program: Command): void {
  const operator = defineGroup(
    program,
    'operator',
    'Create dashboard operator accounts',
    'curriculum operator create --email ops@example.org',
  )
  defineOperatorCreate(operator)
}
