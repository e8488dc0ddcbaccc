/**
 * A real SMTP server for tests (smtp-server, on 127.0.0.1): it keeps what arrives with its
 * envelope and raw message, and answers each message as its script says: accept it, refuse it
 * (a 4xx or 5xx reply to RCPT TO or to the end of the body), or never answer (at the greeting, or
 * after the body). `stop` and `start` again on the same port stand for a server restarted.
 */
import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'

export interface Arrived {
  from: string
  to: string[]
  raw: string
  /** The Message-ID header. */
  messageId: string
  subject: string
}

/** How the server answers one message; `accept` when the script is empty. */
export type Answer =
  | 'accept'
  | { rcpt: number; text?: string }
  | { data: number; text?: string }
  /** Accepts the connection and never greets. */
  | 'hang-greeting'
  /** Reads the whole body and never answers it. */
  | 'hang-after-body'

export interface SmtpTestServerOptions {
  /** Credentials it requires (AUTH PLAIN or LOGIN over plain text); none by default. */
  auth?: { user: string; pass: string }
}

export class SmtpTestServer {
  readonly arrived: Arrived[] = []
  script: Answer[] = []
  /** Connections the server accepted. */
  connections = 0
  port = 0
  readonly #options: SmtpTestServerOptions
  #server: SMTPServer | undefined
  readonly #waiters: { count: number; resolve: () => void }[] = []
  /** The answer for the message under way on each session. */
  readonly #answers = new Map<string, Answer>()

  constructor(options: SmtpTestServerOptions = {}) {
    this.#options = options
  }

  /** `smtp://` URL of this server, with its credentials if it has any. */
  get url(): string {
    const auth = this.#options.auth
    return `smtp://${auth === undefined ? '' : `${auth.user}:${auth.pass}@`}127.0.0.1:${this.port}`
  }

  /** Starts on `port`, or on a free one the first time. */
  async start(port = this.port): Promise<void> {
    const auth = this.#options.auth
    const answerFor = (session: string): Answer => {
      let answer = this.#answers.get(session)
      if (answer === undefined) {
        answer = this.script.shift() ?? 'accept'
        this.#answers.set(session, answer)
      }
      return answer
    }
    const server = new SMTPServer({
      logger: false,
      disableReverseLookup: true,
      disabledCommands: auth === undefined ? ['STARTTLS', 'AUTH'] : ['STARTTLS'],
      authOptional: auth === undefined,
      allowInsecureAuth: true,
      closeTimeout: 200,
      onAuth: (login, _session, callback) =>
        login.username === auth?.user && login.password === auth?.pass
          ? callback(null, { user: login.username })
          : callback(Object.assign(new Error('Invalid credentials'), { responseCode: 535 })),
      onConnect: (session, callback) => {
        this.connections++
        // The first message of a connection is the script's next answer; a greeting never sent hangs here.
        if (answerFor(session.id) === 'hang-greeting') return
        callback()
      },
      onRcptTo: (_address, session, callback) => {
        const answer = answerFor(session.id)
        if (typeof answer === 'object' && 'rcpt' in answer)
          return callback(refusal(answer.rcpt, answer.text ?? 'Recipient refused'))
        callback()
      },
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = []
        stream.on('data', (chunk: Buffer) => chunks.push(chunk))
        stream.on('end', () => {
          const answer = answerFor(session.id)
          this.#answers.delete(session.id)
          if (answer === 'hang-after-body') return
          if (typeof answer === 'object' && 'data' in answer)
            return callback(refusal(answer.data, answer.text ?? 'Message refused'))
          const raw = Buffer.concat(chunks).toString('utf8')
          // The header section unfolded (RFC 5322 section 2.2.3): a long subject arrives on two lines.
          const head = raw.split(/\r?\n\r?\n/, 1)[0]!.replace(/\r?\n([ \t])/g, '$1')
          const header = (name: string) => new RegExp(`^${name}: (.*)$`, 'mi').exec(head)?.[1]?.trim() ?? ''
          const { mailFrom, rcptTo } = session.envelope
          this.arrived.push({
            from: mailFrom === false ? '' : mailFrom.address,
            to: rcptTo.map((r) => r.address),
            raw,
            messageId: header('Message-ID'),
            subject: header('Subject'),
          })
          for (const waiter of this.#waiters.filter((w) => this.arrived.length >= w.count)) {
            this.#waiters.splice(this.#waiters.indexOf(waiter), 1)
            waiter.resolve()
          }
          callback(null, `Ok: queued as ${this.arrived.length}`)
        })
      },
    })
    server.on('error', () => {})
    await new Promise<void>((resolve, reject) => {
      const listening = server.listen(port, '127.0.0.1', () => resolve())
      listening.once('error', reject)
    })
    this.#server = server
    this.port = (server.server.address() as AddressInfo).port
  }

  /** Resolves once `count` messages have arrived in all. */
  hasReceived(count: number): Promise<void> {
    if (this.arrived.length >= count) return Promise.resolve()
    return new Promise((resolve) => this.#waiters.push({ count, resolve }))
  }

  /** Stops listening and ends every connection (a hanging one after its short grace). */
  async stop(): Promise<void> {
    const server = this.#server
    this.#server = undefined
    this.#answers.clear()
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

function refusal(code: number, text: string): Error {
  return Object.assign(new Error(text), { responseCode: code })
}
