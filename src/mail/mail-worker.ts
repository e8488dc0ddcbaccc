/**
 * Sends the mail outbox through SMTP_URL (the rules are cases/mail.ts's). Every instance runs one
 * when SMTP_URL is set; a run interrupts the sends whose lease ran out, claims due messages a few at
 * a time, sends each over a connection of its own and records what came of it, until none is due.
 * The server's timer drives it; tests call `run` themselves. Logs name messages by id and kind,
 * never by recipient.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import { claimMail, type MailAttempt, type MailAttemptRecord, recordMailAttempt } from '../cases/mail.js'
import type { Clock } from '../clock.js'
import { PeriodicTask } from '../services/periodic-task.js'
import type { Database, MailRow } from '../storage/tables.js'
import { attemptDeadlineMs, sendMessage, type SmtpSettings } from './smtp-sender.js'

/** How often each instance looks at the outbox. */
export const MAIL_POLL_MS = 1000

/** Messages one instance sends at once. */
export const MAIL_CONCURRENCY = 4

/** Claims in a row that another instance beat, before a run leaves the rest to the next. */
const MAX_CONTENTIONS = 5

/**
 * How long a claimed message is its claimer's: the attempt's deadline and time to record its
 * outcome, so a lease runs out only when its process stopped (or stalled) mid-send.
 */
export function mailLeaseMs(settings: SmtpSettings): number {
  return attemptDeadlineMs(settings) + 30_000
}

export interface MailWorkerOptions {
  db: Kysely<Database>
  clock: Clock
  log: FastifyBaseLogger
  smtp: SmtpSettings
  /** Messages sent at once; MAIL_CONCURRENCY by default. */
  concurrency?: number
}

/** What the log says of each outcome. */
const OUTCOMES: Record<MailAttemptRecord['state'], string> = {
  sent: 'mail sent',
  pending: 'mail deferred: it is sent again later',
  failed: 'mail failed',
  interrupted: 'mail interrupted: the server may have taken it; not sent again',
}

/** `run()` resolves to how many attempts it made. */
export class MailWorker extends PeriodicTask {
  constructor({ db, clock, log, smtp, concurrency = MAIL_CONCURRENCY }: MailWorkerOptions) {
    const leaseMs = mailLeaseMs(smtp)
    const attempt = async (row: MailRow, stopping: AbortSignal) => {
      // The row's id and its creation time: a restored backup may number rows again.
      const messageKey = `mail-${row.id}.${Date.parse(row.created_at).toString(36)}`
      const message = { to: row.recipient, subject: row.subject, text: row.text_body, html: row.html_body, messageKey }
      const sent: MailAttempt = await sendMessage(smtp, message, stopping)
      const mail = { id: row.id, kind: row.kind, attempt: row.attempts }
      try {
        const record = await recordMailAttempt(db, row, sent, clock.now())
        const detail = sent.ok ? sent.response : sent.failure.message
        if (!record.recorded)
          log.warn({ mail, detail }, 'mail attempt not recorded: the message was queued again meanwhile')
        else if (sent.ok || record.state === 'pending') log.info({ mail, detail }, OUTCOMES[record.state])
        else log.warn({ mail, detail }, OUTCOMES[record.state])
      } catch (err) {
        // Its lease runs out and it shows as interrupted: never sent twice.
        log.warn({ err, mail }, 'could not record a mail attempt')
      }
    }
    const work = async (stopping: AbortSignal) => {
      let attempts = 0
      for (let contentions = 0; !stopping.aborted; ) {
        const { claimed, interrupted, contended } = await claimMail(db, clock.now(), leaseMs, concurrency)
        for (const id of interrupted)
          log.warn({ mail: { id } }, 'mail interrupted: its sending process stopped mid-send; not sent again')
        if (claimed.length === 0) {
          // Another instance took the messages asked for: the next ones are still due.
          if (contended && ++contentions < MAX_CONTENTIONS) continue
          break
        }
        contentions = 0
        await Promise.all(claimed.map((row) => attempt(row, stopping)))
        attempts += claimed.length
      }
      return attempts
    }
    super(work, log, 'could not send mail')
  }
}
