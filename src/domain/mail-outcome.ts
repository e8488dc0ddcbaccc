/**
 * What an SMTP attempt's failure means for its message (docs/email.md, "Sent at most once"): sent
 * again later, failed for good, or interrupted (it may have arrived, so it is never sent again but
 * by an operator). Decided from what nodemailer reports (`code`, `command`, `responseCode`) and
 * from whether the whole message body had been handed to the connection.
 */

/** A failed attempt as the sender saw it. */
export interface SmtpFailure {
  /** nodemailer's code (ECONNECTION, ETIMEDOUT, EENVELOPE, EMESSAGE, ...), or the socket's. */
  code?: string | undefined
  /** The SMTP command the server's answer was to (CONN, MAIL FROM, RCPT TO, DATA, ...). */
  command?: string | undefined
  /** The server's reply code, when the failure is an answer of the server's. */
  responseCode?: number | undefined
  /** What went wrong, with the server's answer when there was one. */
  message: string
  /** The whole body was written to the connection: the server may have taken the message. */
  bodySent: boolean
}

export type MailVerdict = 'retry' | 'failed' | 'interrupted'

/**
 * An answer from the server is certain: a 5xx refuses the message for good and a 4xx defers it
 * (RFC 5321, 4.2.1), wherever in the conversation it came. Without an answer, a failure before
 * the whole body was sent cannot have delivered anything (the server takes a message only at the
 * line that ends its body), and one after it may have.
 */
export function mailVerdict(failure: SmtpFailure): MailVerdict {
  const code = failure.responseCode
  if (code !== undefined && code >= 500 && code < 600) return 'failed'
  if (code !== undefined && code >= 400 && code < 500) return 'retry'
  return failure.bodySent ? 'interrupted' : 'retry'
}

/**
 * Waits before each retry of a deferred message: 1 min, 5 min, 30 min, 2 h, then 6 h, so a mail
 * server down for an afternoon still gets it; after the last one the message has failed.
 */
export const MAIL_RETRY_DELAYS_MS = [60_000, 300_000, 1_800_000, 7_200_000, 21_600_000] as const

/** Attempts a message gets before it has failed. */
export const MAX_MAIL_ATTEMPTS = MAIL_RETRY_DELAYS_MS.length + 1

/** When the attempt after `attempts` deferred ones is due, or null when none is left. */
export function nextMailAttemptAt(attempts: number, failedAt: number): number | null {
  const delay = MAIL_RETRY_DELAYS_MS[attempts - 1]
  return delay === undefined ? null : failedAt + delay
}

/** The longest last error kept with a message. */
const MAX_ERROR_LENGTH = 500

/** A failure as the Outbox page shows it: the server's answer or the connection's error, and when. */
export function failureText(failure: SmtpFailure): string {
  const where = failure.command === undefined ? '' : ` (${failure.command})`
  const code = failure.responseCode === undefined && failure.code !== undefined ? `${failure.code}: ` : ''
  return `${code}${failure.message}${where}`.replace(/\s+/g, ' ').slice(0, MAX_ERROR_LENGTH)
}
