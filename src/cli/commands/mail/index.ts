/**
 * `curriculum mail ...`: the outgoing mail outbox (cases/mail.ts). The command queues; the server's
 * mail worker sends (SMTP_URL), or the message stays in the outbox, read on the dashboard's Outbox page.
 */
import type { Command } from 'commander'
import { defineGroup } from '../../options.js'
import { defineMailTest } from './test.js'

export function defineMail(program: Command): void {
  const mail = defineGroup(
    program,
    'mail',
    'Outgoing mail: queue a test message',
    'curriculum mail test --to ops@example.org',
  )
  defineMailTest(mail)
}
