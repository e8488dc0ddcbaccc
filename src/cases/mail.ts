/**
 * Outgoing mail's rules (docs/email.md). A request only queues a row (`queueMail`), and never waits
 * on SMTP; the worker of src/mail/ claims due rows into `sending` under a lease before it speaks to
 * the server (`claimMail`) and records each attempt here (`recordMailAttempt`): sent; deferred and
 * due again later, up to MAX_MAIL_ATTEMPTS; failed; or interrupted when the server may have taken
 * the message, which is then never sent again but by an operator (`sendMailAgain`). So a message is
 * sent at most once: a crash mid-send can lose one (shown as interrupted), never send it twice.
 *
 * No mail carries a child's name or any student data: messages are about accounts and the service,
 * and nothing here takes a student, a student id or a progress record.
 */
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import { isMailRecipient } from '../domain/email.js'
import { ConflictError, NotFoundError } from '../domain/errors.js'
import { escapeHtml } from '../domain/html-escape.js'
import {
  type MailVerdict,
  mailVerdict,
  nextMailAttemptAt,
  type SmtpFailure,
  failureText,
} from '../domain/mail-outcome.js'
import {
  claimDueMail,
  deleteEndedMail,
  findMail,
  hasMailToClaim,
  insertMail,
  interruptExpiredSends,
  type MailOutcome,
  recordMailOutcome,
  requeueMail,
} from '../storage/mail-outbox-repository.js'
import type { Database, MailRow } from '../storage/tables.js'
import { inTransaction } from '../storage/transaction.js'
import { auditOperator, type OperatorAudit } from './operator-action.js'

/** What a message is for. */
export type MailKind =
  | 'test'
  | 'verify-email'
  | 'password-reset'
  | 'sign-up-again'
  | 'email-change'
  | 'email-change-notice'
  | 'password-changed'
  | 'invitation'
  // Notices (cases/notices.ts, cases/due-notices.ts).
  | 'application-approved'
  | 'application-rejected'
  | 'agreement-recorded'
  | 'agreement-ending'
  | 'key-expiring'
  | 'webhook-disabled'
  | 'deletion-deadline'
  | 'new-device'
  | 'second-factor-changed'
  | 'api-deprecation'

/**
 * Messages whose link signs its holder in or changes an account: once mail is sent, the Outbox
 * page does not show their text, which would let whoever reads the page use the link.
 */
export const ONE_TIME_LINK_KINDS: ReadonlySet<string> = new Set([
  'verify-email',
  'password-reset',
  'email-change',
  'invitation',
])

export interface OutgoingMail {
  kind: MailKind
  to: string
  subject: string
  text: string
  html: string | null
  /** The one link the message is about, if any: what the log names when mail is not sent. */
  link: string | null
}

/** What the log says of a message kept in the outbox: never its recipient or its body. */
export interface HeldMail {
  id: number
  kind: MailKind
  subject: string
  link: string | null
}

/** Announces a queued message in one log line; given only when SMTP_URL is unset and nothing is sent. */
export type HeldMailNotice = (mail: HeldMail) => void

/** What is wrong with a recipient, or null: one plain address, never a list or a name. */
export function recipientProblem(to: string): string | null {
  return isMailRecipient(to) ? null : 'Enter one e-mail address like name@example.org.'
}

/** A subject is one line, whatever it was given: a line break would end the header. */
const oneLine = (subject: string) => subject.replace(/\s+/g, ' ').trim()

/** Checks and adds a message. */
async function addMail(db: Kysely<Database>, mail: OutgoingMail, now: number): Promise<number> {
  const problem = recipientProblem(mail.to)
  if (problem !== null) throw new ConflictError(problem)
  const row = { kind: mail.kind, recipient: mail.to, subject: oneLine(mail.subject), text: mail.text, html: mail.html }
  return insertMail(db, row, now)
}

/** Announces a message queued in a transaction, once the transaction has committed. */
export function announceMail(held: HeldMailNotice | undefined, id: number, mail: OutgoingMail): void {
  held?.({ id, kind: mail.kind, subject: oneLine(mail.subject), link: mail.link })
}

/**
 * Queues a message for the worker and resolves to its id; `held` announces it once it is
 * written. Inside a caller's transaction, pass `held` only after the commit.
 */
export async function queueMail(
  db: Kysely<Database>,
  mail: OutgoingMail,
  now: number,
  held?: HeldMailNotice,
): Promise<number> {
  const id = await addMail(db, mail, now)
  announceMail(held, id, mail)
  return id
}

/** The test message: fixed words, the service's address and the outbox's, and nothing about anyone. */
export function testMail(to: string, publicUrl: string): OutgoingMail {
  const outbox = `${publicUrl}/dashboard/operator/outbox`
  const lines = [
    `This is a test message from the Curriculum API at ${publicUrl}.`,
    'An operator sent it to check that outgoing mail works. If it reached you, it does; nothing else needs doing.',
    `The outbox: ${outbox}`,
  ]
  const html = [
    `<p>${escapeHtml(lines[0])}</p>`,
    `<p>${escapeHtml(lines[1])}</p>`,
    `<p>The outbox: <a href="${escapeHtml(outbox)}">${escapeHtml(outbox)}</a></p>`,
  ]
  return {
    kind: 'test',
    to,
    subject: 'Curriculum API test message',
    text: `${lines.join('\n\n')}\n`,
    html: `<!doctype html><html><body>${html.join('')}</body></html>`,
    link: outbox,
  }
}

/** An operator's test message to `to`, audited in its transaction when `audit` names the operator. */
export async function queueTestMail(
  db: Kysely<Database>,
  to: string,
  publicUrl: string,
  now: number,
  options: { audit?: OperatorAudit; held?: HeldMailNotice } = {},
): Promise<number> {
  const mail = testMail(to, publicUrl)
  const id = await inTransaction(db, async (trx) => {
    const id = await addMail(trx, mail, now)
    await auditOperator(trx, options.audit, { action: 'mail.test', target: `mail:${id}`, detail: { to } }, now)
    return id
  })
  announceMail(options.held, id, mail)
  return id
}

/** Why a `sending` row whose lease ran out is interrupted: its process stopped mid-send. */
export const LEASE_RAN_OUT =
  'The sending process stopped during the SMTP conversation: the message may have arrived. ' +
  'Send it again only if the recipient did not get it.'

export interface MailClaimed {
  /** Messages now this claimer's to send, oldest first. */
  claimed: MailRow[]
  /** Sends whose lease had run out, now interrupted. */
  interrupted: number[]
  /** None claimed although some are due: another instance took those asked for at the same moment. */
  contended: boolean
}

/**
 * Interrupts the sends whose lease ran out (never sent again automatically: the server may have
 * taken them), then claims up to `limit` due messages into `sending` for `leaseMs`. Looks first
 * without writing, so an idle outbox costs one read.
 */
export async function claimMail(
  db: Kysely<Database>,
  now: number,
  leaseMs: number,
  limit: number,
): Promise<MailClaimed> {
  if (!(await hasMailToClaim(db, now))) return { claimed: [], interrupted: [], contended: false }
  return inTransaction(db, async (trx) => {
    const interrupted = await interruptExpiredSends(trx, now, LEASE_RAN_OUT)
    const claimed = await claimDueMail(trx, { now, leaseMs, limit })
    return { interrupted, claimed, contended: claimed.length === 0 && (await hasMailToClaim(trx, now)) }
  })
}

/** What one attempt came to, as the sender reports it. */
export type MailAttempt =
  | { ok: true; messageId: string /** The server's answer, e.g. `250 Ok: queued as ...`. */; response: string }
  | { ok: false; failure: SmtpFailure }

/** What became of a message after an attempt; `recorded` is false when the row was no longer its claim's. */
export interface MailAttemptRecord {
  state: MailOutcome['state']
  verdict: MailVerdict | 'sent'
  recorded: boolean
}

/**
 * Records a claimed message's attempt: sent; or, by `mailVerdict`, due again after the next
 * delay (failed once none is left), failed at once, or interrupted.
 */
export async function recordMailAttempt(
  db: Kysely<Database>,
  claimed: MailRow,
  attempt: MailAttempt,
  now: number,
): Promise<MailAttemptRecord> {
  if (attempt.ok) {
    const sent: MailOutcome = {
      state: 'sent',
      nextAttemptAt: null,
      error: null,
      sentAt: now,
      messageId: attempt.messageId,
    }
    return { state: 'sent', verdict: 'sent', recorded: await recordMailOutcome(db, claimed, sent) }
  }
  const verdict = mailVerdict(attempt.failure)
  const error = failureText(attempt.failure)
  const next = verdict === 'retry' ? nextMailAttemptAt(claimed.attempts, now) : null
  const outcome: MailOutcome =
    verdict === 'retry' && next !== null
      ? { state: 'pending', nextAttemptAt: next, error, sentAt: null, messageId: null }
      : {
          state: verdict === 'interrupted' ? 'interrupted' : 'failed',
          nextAttemptAt: null,
          error: verdict === 'retry' ? `Gave up after ${claimed.attempts} attempts. Last: ${error}` : error,
          sentAt: null,
          messageId: null,
        }
  return { state: outcome.state, verdict, recorded: await recordMailOutcome(db, claimed, outcome) }
}

/**
 * The Outbox page's "Send again": an interrupted or failed message back in the queue with a fresh
 * set of attempts, audited. It may reach the recipient twice if the first did arrive: the operator
 * decides. NotFoundError for no such message, ConflictError for one in another state.
 */
export async function sendMailAgain(
  db: Kysely<Database>,
  id: number,
  now: number,
  audit?: OperatorAudit,
): Promise<MailRow> {
  return inTransaction(db, async (trx) => {
    const before = await findMail(trx, id)
    if (before === undefined) throw new NotFoundError(`there is no message ${id}`)
    if (!(await requeueMail(trx, before, now)))
      throw new ConflictError(
        `message ${id} is ${before.state}: only an interrupted or failed message can be sent again`,
      )
    const detail = { kind: before.kind, to: before.recipient, state: before.state, attempts: before.attempts }
    await auditOperator(trx, audit, { action: 'mail.send_again', target: `mail:${id}`, detail }, now)
    return before
  })
}

const DAY_MS = 86_400_000

/**
 * Deletes the messages queued more than `days` ago that are sent, failed or interrupted: their
 * bodies hold addresses and links no one needs once they are over. Pending ones are kept.
 */
export function pruneMailOutbox(db: Kysely<Database>, now: number, days: number): Promise<number> {
  return deleteEndedMail(db, isoAt(now - days * DAY_MS))
}
