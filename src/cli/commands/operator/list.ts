/** `curriculum operator list`: the operator accounts, their roles and whether each has a second factor. */
import type { Command } from 'commander'
import { act } from '../../command-action.js'
import { defineCommand } from '../../options.js'
import { type CommandResult, tableOf } from '../../output.js'
import { withStorage } from '../../storage-session.js'

export function defineOperatorList(operator: Command): void {
  defineCommand(operator, 'list', 'List operator accounts with their role and second factor', [
    'curriculum operator list',
    'curriculum operator list --json',
  ]).action(act(listOperatorAccounts))
}

async function listOperatorAccounts(): Promise<CommandResult> {
  const rows = await withStorage(async ({ storage }) =>
    (await import('../../../storage/operator-repository.js')).listOperators(storage.db),
  )
  return {
    data: { operators: rows },
    text: tableOf('no operators', ['EMAIL', 'ROLE', 'TWO-STEP', 'LAST ACTIVE', 'CREATED', 'ID'], rows, (row) => [
      row.email,
      row.role,
      row.secondFactor ? 'on' : 'off',
      row.lastActiveAt ?? '-',
      row.createdAt,
      row.id,
    ]),
  }
}
