/**
 * `curriculum operator reset-2fa`: for the day an operator's phone is lost with its recovery
 * codes. Removes the operator's authenticator, recovery codes and passkeys and ends its sessions; at its
 * next sign-in the dashboard makes it enrol again. Only someone with the database's credentials
 * runs it, which is why the dashboard has no such button.
 */
import type { Command } from 'commander'
import { systemClock } from '../../../clock.js'
import type { Audit } from '../../audit.js'
import { act } from '../../command-action.js'
import { defineCommand } from '../../options.js'
import { type CommandResult, plural } from '../../output.js'

export function defineOperatorResetTwoStep(operator: Command): void {
  defineCommand(
    operator,
    'reset-2fa',
    'Remove an operator’s second factor (a lost phone): its sessions end and it enrols again at its next sign-in',
    [
      'curriculum operator reset-2fa --email ops@example.org',
      'curriculum operator reset-2fa --email ops@example.org --json',
    ],
    { audit: 'operator.reset-2fa' },
  )
    .requiredOption('--email <address>', 'the operator’s e-mail address')
    .action(act(resetTwoStep))
}

async function resetTwoStep(command: Command, audit: Audit): Promise<CommandResult> {
  const { email } = command.opts<{ email: string }>()
  const reset = await audit.change(async ({ db, config }) => {
    const { resetOperatorSecondFactor } = await import('../../../cases/operators.js')
    const notices = { publicUrl: config.publicUrl }
    const value = await resetOperatorSecondFactor(db, email, { actor: audit.actor }, systemClock.now(), notices)
    const changed = { email: value.account.email, factorRemoved: value.removed, sessionsEnded: value.sessionsEnded }
    return { value, target: `account:${value.account.id}`, changed }
  })
  const { account, removed, sessionsEnded } = reset
  return {
    data: { account: { id: account.id, email: account.email }, factorRemoved: removed, sessionsEnded },
    text: [
      removed
        ? `removed the second factor of ${account.email} (authenticator, recovery codes and passkeys)`
        : `${account.email} had no second factor`,
      `${plural(sessionsEnded, 'session')} ended; at the next sign-in the dashboard asks to set up ` +
        'two-step sign-in again',
    ],
  }
}
