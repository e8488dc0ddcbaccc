/** `curriculum mail test`: a test message queued to an address, audited (cases/mail.ts). */
import { type Command, InvalidArgumentError } from 'commander'
import { systemClock } from '../../../clock.js'
import { isMailRecipient } from '../../../domain/email.js'
import type { Audit } from '../../audit.js'
import { act } from '../../command-action.js'
import { defineCommand } from '../../options.js'
import type { CommandResult } from '../../output.js'

/** One address: a list or a name and address is a usage error (exit 2) before anything is opened. */
function recipientOption(text: string): string {
  const address = text.trim()
  if (!isMailRecipient(address)) throw new InvalidArgumentError('expected one e-mail address such as ops@example.org.')
  return address
}

export function defineMailTest(mail: Command): void {
  defineCommand(
    mail,
    'test',
    'Queue a test message to an address: the server sends it through SMTP_URL, or keeps it in the outbox',
    ['curriculum mail test --to ops@example.org', 'curriculum mail test --to ops@example.org --json'],
    { audit: 'mail.test' },
  )
    .requiredOption('--to <address>', 'the one address to send it to', recipientOption)
    .action(act(queueTest))
}

async function queueTest(command: Command, audit: Audit): Promise<CommandResult> {
  const { to } = command.opts<{ to: string }>()
  const queued = await audit.change(async ({ db, config }) => {
    const { queueTestMail } = await import('../../../cases/mail.js')
    const id = await queueTestMail(db, to, config.publicUrl, systemClock.now())
    return { value: { id, sending: config.smtpUrl !== undefined }, target: `mail:${id}`, changed: { to } }
  })
  const where = queued.sending
    ? 'a running server sends it through SMTP_URL'
    : "SMTP_URL is unset here: a server without it keeps it in the outbox (the dashboard's Outbox page)"
  return {
    data: { mail: { id: queued.id, kind: 'test', to, state: 'pending' } },
    text: `queued test message ${queued.id} to ${to}; ${where}`,
  }
}
