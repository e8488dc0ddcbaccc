/**
 * One SMTP attempt with nodemailer: the message composed (its MailComposer) and sent over a
 * connection of its own (its SMTPConnection), to SMTP_URL. nodemailer's transport would do both,
 * but it never says whether the message body had been handed over when a connection failed; a body
 * stream of our own does, and that decides whether the server may have taken the message
 * (domain/mail-outcome.ts). Every wait has a time-out, and the attempt as a whole a deadline, so that
 * it ends well within its lease. nodemailer is loaded at the first send: without SMTP_URL, never.
 */
import { createRequire } from 'node:module'
import { Readable } from 'node:stream'
import type { NodemailerError } from 'nodemailer/lib/errors'
import type MailComposer from 'nodemailer/lib/mail-composer'
import type * as Shared from 'nodemailer/lib/shared'
import type SMTPConnection from 'nodemailer/lib/smtp-connection'
import type { MailAttempt } from '../cases/mail.js'
import type { Config } from '../config.js'

const requireModule = createRequire(import.meta.url)

export interface SmtpSettings {
  /** SMTP_URL: `smtp://` (STARTTLS when offered) or `smtps://`, with credentials if any. */
  url: string
  /** MAIL_FROM. */
  from: string
  connectionTimeoutMs: number
  greetingTimeoutMs: number
  socketTimeoutMs: number
}

export function smtpSettings(config: Config): SmtpSettings | undefined {
  if (config.smtpUrl === undefined) return undefined
  return {
    url: config.smtpUrl,
    from: config.mailFrom,
    connectionTimeoutMs: config.smtpConnectionTimeoutMs,
    greetingTimeoutMs: config.smtpGreetingTimeoutMs,
    socketTimeoutMs: config.smtpSocketTimeoutMs,
  }
}

/**
 * The longest an attempt lasts, whatever the server does: connecting, its greeting, then a few
 * of its longest silences (a trickling server resets the socket's idle timer, not this).
 */
export function attemptDeadlineMs(settings: SmtpSettings): number {
  return settings.connectionTimeoutMs + settings.greetingTimeoutMs + 3 * settings.socketTimeoutMs
}

export interface MessageToSend {
  to: string
  subject: string
  text: string
  html: string | null
  /** The left part of its Message-ID: the same on every attempt, so that copies are one message to mail clients. */
  messageKey: string
}

/** What nodemailer reported, as the outcome rules read it. */
function failure(error: NodemailerError, bodySent: boolean): MailAttempt {
  return {
    ok: false,
    failure: {
      code: error.code,
      command: error.command,
      responseCode: error.responseCode,
      message: error.message,
      bodySent,
    },
  }
}

const stopped = (message: string, code: string): NodemailerError => Object.assign(new Error(message), { code })

/**
 * Sends `message` once. Resolves, never rejects, to what came of it. `stopping` (the server
 * closing) ends an attempt whose body has not all been sent; one whose body has waits for the
 * server's answer, so a shutdown does not make an ordinary send look interrupted.
 */
export async function sendMessage(
  settings: SmtpSettings,
  message: MessageToSend,
  stopping?: AbortSignal,
): Promise<MailAttempt> {
  const Composer = requireModule('nodemailer/lib/mail-composer') as typeof MailComposer
  const Connection = requireModule('nodemailer/lib/smtp-connection') as typeof SMTPConnection
  const { parseConnectionUrl } = requireModule('nodemailer/lib/shared') as typeof Shared
  const { auth, ...server } = parseConnectionUrl(settings.url)
  let composed: { raw: Buffer; envelope: { from: string | false; to: string[] }; messageId: string }
  try {
    const domain = /@([^@>\s]+)>?\s*$/.exec(settings.from)?.[1] ?? 'localhost'
    const node = new Composer({
      from: settings.from,
      to: message.to,
      subject: message.subject,
      text: message.text,
      ...(message.html === null ? {} : { html: message.html }),
      messageId: `<${message.messageKey}@${domain}>`,
    }).compile()
    composed = { raw: await node.build(), envelope: node.getEnvelope(), messageId: node.messageId() }
  } catch (error) {
    return failure(error as NodemailerError, false)
  }
  const { raw, envelope, messageId } = composed
  return new Promise<MailAttempt>((resolve) => {
    let bodySent = false
    let settled = false
    const connection = new Connection({
      ...server,
      connectionTimeout: settings.connectionTimeoutMs,
      greetingTimeout: settings.greetingTimeoutMs,
      socketTimeout: settings.socketTimeoutMs,
      dnsTimeout: settings.connectionTimeoutMs,
      logger: false,
    })
    const settle = (attempt: MailAttempt) => {
      if (settled) return
      settled = true
      clearTimeout(deadline)
      stopping?.removeEventListener('abort', onStop)
      resolve(attempt)
    }
    const fail = (error: NodemailerError) => {
      settle(failure(error, bodySent))
      connection.close()
    }
    const deadlineMs = attemptDeadlineMs(settings)
    const deadline = setTimeout(() => fail(stopped(`no outcome within ${deadlineMs} ms`, 'ETIMEDOUT')), deadlineMs)
    const onStop = () => {
      if (!bodySent) fail(stopped('cut short: the server stopped', 'EABORT'))
    }
    connection.on('error', fail)
    stopping?.addEventListener('abort', onStop)
    if (stopping?.aborted) return onStop()
    // Read only once the server has answered DATA; its end means the whole body went out.
    const body = new Readable({
      read() {
        this.push(raw)
        this.push(null)
      },
    })
    body.once('end', () => {
      bodySent = true
    })
    const send = () =>
      connection.send({ from: envelope.from || '', to: envelope.to }, body, (error, info) => {
        if (error) return fail(error)
        settle({ ok: true, messageId, response: info.response })
        // Its outcome is known: whatever happens to the connection now changes nothing.
        connection.quit()
      })
    connection.connect((error) => {
      if (error) return fail(error)
      if (auth === undefined || !connection.allowsAuth) return send()
      connection.login(auth, (loginError) => (loginError ? fail(loginError) : send()))
    })
  })
}
