/** `curriculum operator ...`: the first operator account, the list of operators, and a lost second factor's reset. */
import type { Command } from 'commander'
import { defineGroup } from '../../options.js'
import { defineOperatorCreate } from './create.js'
import { defineOperatorList } from './list.js'
import { defineOperatorResetTwoStep } from './reset-2fa.js'

export function defineOperator(program: Command): void {
  const operator = defineGroup(
    program,
    'operator',
    'Create operator admins, list operators, reset an operator’s second factor',
    'curriculum operator create --email ops@example.org',
  )
  defineOperatorCreate(operator)
  defineOperatorList(operator)
  defineOperatorResetTwoStep(operator)
}
