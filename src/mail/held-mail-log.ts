/**
 * Without SMTP_URL nothing is sent: each message queued stays in the outbox, and the log says so
 * in one line with what it is and its link (never its recipient or its body), so that the demo's
 * operator can follow a link at once or read the message on the Outbox page.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { HeldMailNotice } from '../cases/mail.js'

export function heldMailLog(log: FastifyBaseLogger): HeldMailNotice {
  return (mail) =>
    log.info(
      { mail },
      `mail kept in the outbox (SMTP_URL is unset): ${mail.kind} message ${mail.id}, "${mail.subject}"` +
        `${mail.link === null ? '' : `, link: ${mail.link}`}; read it on the dashboard's Outbox page`,
    )
}
