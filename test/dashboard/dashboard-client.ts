/**
 * A browser-like client for the dashboard over Fastify's inject, or over a real socket when given
 * one (a TestContext's `send`): it keeps cookies, and fills in the CSRF field the way a page's
 * form would.
 */
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import type { Kysely } from 'kysely'
import { HOTP, Secret } from 'otpauth'
import { beginTotpEnrolment, confirmTotpEnrolment, secondFactorKey } from '../../src/cases/second-factor.js'
import type { Clock } from '../../src/clock.js'
import { hashPassword } from '../../src/domain/passwords.js'
import type { TypedApp } from '../../src/http/app-types.js'
import { createAccount } from '../../src/storage/account-repository.js'
import { insertMembership } from '../../src/storage/membership-repository.js'
import type { Database } from '../../src/storage/tables.js'
import type { TestContext } from '../helper.js'
import type { HttpRequest, HttpResponse } from '../support/http-client.js'
import { waitFor } from '../support/wait-for.js'

/** Sends a request over a real socket (test/support/http-client.ts), answering in inject's shape. */
export type SocketSend = (request: HttpRequest) => Promise<HttpResponse>

/** An authenticator app's code of RFC 6238 time step `step`, computed by `otpauth` from the secret. */
export function totpCodeAt(secret: string, step: number): string {
  return HOTP.generate({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, counter: step })
}

/** The RFC 6238 time step at `at` (30-second steps). */
export const stepAt = (at: number): number => Math.floor(at / 30_000)

/** The authenticator app a client holds: the secret, the server's clock, and the last step it used. */
export interface Authenticator {
  secret: string
  clock: Pick<Clock, 'now'>
  lastStep: number
}

export class DashboardClient {
  readonly #app: TypedApp
  readonly #ip: string
  readonly #socket: SocketSend | undefined
  /** Headers every request of this client carries, as a browser sends its User-Agent. */
  readonly #headers: Record<string, string>
  readonly cookies = new Map<string, string>()
  /** Set: `signIn` enters the authenticator's code when the sign-in asks for it. */
  authenticator: Authenticator | undefined

  constructor(app: TypedApp, ip = '192.0.2.10', socket?: SocketSend, headers: Record<string, string> = {}) {
    this.#app = app
    this.#ip = ip
    this.#socket = socket
    this.#headers = headers
  }

  #inject(options: InjectOptions & HttpRequest): Promise<LightMyRequestResponse> {
    if (this.#socket === undefined) return this.#app.inject(options)
    // The fields the tests read (status, headers, body, json) are the same in both shapes.
    return this.#socket(options) as Promise<unknown> as Promise<LightMyRequestResponse>
  }

  #cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ')
  }

  #remember(response: LightMyRequestResponse): void {
    const header = response.headers['set-cookie']
    for (const cookie of header === undefined ? [] : Array.isArray(header) ? header : [header]) {
      const [pair] = cookie.split(';')
      const [name, value] = pair!.split('=') as [string, string]
      if (/Max-Age=0/.test(cookie)) this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
  }

  /**
   * Opens a page as a link on one of the dashboard's own pages does (`Sec-Fetch-Site:
   * same-origin`); `headers` adds or replaces request headers (e.g. another site's).
   */
  async get(url: string, headers: Record<string, string | undefined> = {}): Promise<LightMyRequestResponse> {
    const all: Record<string, string | undefined> = {
      ...this.#headers,
      cookie: this.#cookieHeader(),
      'sec-fetch-site': 'same-origin',
      'sec-fetch-mode': 'navigate',
      ...headers,
    }
    const response = await this.#inject({
      method: 'GET',
      url,
      headers: Object.fromEntries(Object.entries(all).filter(([, value]) => value !== undefined)) as Record<
        string,
        string
      >,
      remoteAddress: this.#ip,
    })
    this.#remember(response)
    return response
  }

  /** The CSRF token a page would put in its forms now. */
  async csrf(): Promise<string> {
    // A session waiting for its code is sent to the code page, whose forms carry the same token.
    const page = await this.follow(await this.get('/dashboard/signup'))
    const token = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1]
    if (token === undefined) throw new Error('no CSRF field on the sign-up page')
    return token
  }

  /**
   * Posts a form; `_csrf` is filled in unless the caller sets it (or sets it to null to leave it
   * out). `headers` adds or replaces request headers (e.g. Origin, or a forged Cookie).
   */
  async post(
    url: string,
    form: Record<string, string | string[] | null> = {},
    headers: Record<string, string> = {},
  ): Promise<LightMyRequestResponse> {
    const fields = {
      _csrf: form._csrf === undefined ? await this.csrf() : form._csrf,
      ...Object.fromEntries(Object.entries(form).filter(([k]) => k !== '_csrf')),
    }
    const body = new URLSearchParams()
    for (const [name, value] of Object.entries(fields)) {
      if (value === null) continue
      for (const one of Array.isArray(value) ? value : [value]) body.append(name, one)
    }
    const response = await this.#inject({
      method: 'POST',
      url,
      headers: {
        ...this.#headers,
        cookie: this.#cookieHeader(),
        'content-type': 'application/x-www-form-urlencoded',
        ...headers,
      },
      payload: body.toString(),
      remoteAddress: this.#ip,
    })
    this.#remember(response)
    return response
  }

  /** Posts JSON as the dashboard's script does (the passkey ceremonies), with the page's CSRF token. */
  async postJson(url: string, body: Record<string, unknown>): Promise<LightMyRequestResponse> {
    // The token first: fetching it may set the visitor cookie the request must carry.
    const csrf = await this.csrf()
    const response = await this.#inject({
      method: 'POST',
      url,
      headers: { ...this.#headers, cookie: this.#cookieHeader(), 'content-type': 'application/json' },
      payload: JSON.stringify({ _csrf: csrf, ...body }),
      remoteAddress: this.#ip,
    })
    this.#remember(response)
    return response
  }

  /**
   * Posts a multipart form as a browser sends a file upload: the fields in the order given
   * (`_csrf` first unless set, or left out with null), then the file.
   */
  async postFile(
    url: string,
    fields: Record<string, string | null>,
    file: { field: string; name: string; data: Buffer },
  ): Promise<LightMyRequestResponse> {
    const boundary = '----dashboardtest7MA4YWxkTrZu0gW'
    const all = { _csrf: fields._csrf === undefined ? await this.csrf() : fields._csrf, ...fields }
    const parts: Buffer[] = []
    for (const [name, value] of Object.entries(all)) {
      if (value === null) continue
      parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`))
    }
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${file.field}"; filename="${file.name}"\r\n` +
          'Content-Type: application/zip\r\n\r\n',
      ),
      file.data,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    )
    const response = await this.#inject({
      method: 'POST',
      url,
      headers: {
        ...this.#headers,
        cookie: this.#cookieHeader(),
        'content-type': `multipart/form-data; boundary=${boundary}`,
      },
      payload: Buffer.concat(parts),
      remoteAddress: this.#ip,
    })
    this.#remember(response)
    return response
  }

  /** Follows a 303 to a dashboard page, as a browser would; any other response as it is. */
  async follow(response: LightMyRequestResponse): Promise<LightMyRequestResponse> {
    const location = response.headers.location
    return response.statusCode === 303 && location?.startsWith('/dashboard') ? this.get(location) : response
  }

  /**
   * Signs up, then signs in as the sign-up answer asks, and follows the first sign-in's redirect:
   * the response is the welcome page with the sandbox's test key (200), or the sign-up's if it
   * was refused.
   */
  async signUp(email: string, password = 'a long and memorable phrase'): Promise<LightMyRequestResponse> {
    const signUp = await this.post('/dashboard/signup', { email, password })
    if (signUp.statusCode !== 303) return signUp
    return this.follow(await this.signIn(email, password))
  }

  /**
   * Signs in with the password, and with an authenticator, enters its code when the answer asks
   * for one: the response is the code's (303 to the page asked for) or the password's.
   */
  async signIn(email: string, password = 'a long and memorable phrase'): Promise<LightMyRequestResponse> {
    const answer = await this.post('/dashboard/login', { email, password })
    const location = answer.headers.location ?? ''
    if (this.authenticator === undefined || !location.startsWith('/dashboard/sign-in/code')) return answer
    const next = new URL(location, 'http://x').searchParams.get('next')
    return this.post('/dashboard/sign-in/code', { code: this.nextCode(), ...(next === null ? {} : { next }) })
  }

  /**
   * The authenticator's next unused code: the earliest step the server accepts now (one step
   * either side) after the last one used; throws when the test must move its clock on first.
   */
  nextCode(): string {
    const app = this.authenticator
    if (app === undefined) throw new Error('this client has no authenticator')
    const now = stepAt(app.clock.now())
    const step = Math.max(now - 1, app.lastStep + 1)
    if (step > now + 1) throw new Error('every code of this window was used: move the clock on 30 seconds')
    app.lastStep = step
    return totpCodeAt(app.secret, step)
  }

  /**
   * Opens the newest link of `kind` mailed to `email` (waiting for its message, which a form
   * queues after its answer) and sends the form it shows, as a person would; the POST's response.
   */
  async useMailedLink(db: Kysely<Database>, email: string, kind = 'verify-email'): Promise<LightMyRequestResponse> {
    const link = await mailedLink(db, email, kind)
    const page = await this.get(link)
    if (page.statusCode !== 200) throw new Error(`${link} answered ${page.statusCode}`)
    // The page's own form, in <main>: the header's sign-out form comes first.
    const action = /<form method="post" action="([^"]+)"/.exec(page.body.slice(page.body.indexOf('<main')))?.[1]
    return this.post(action!, { token: new URL(link, 'http://x').searchParams.get('token')! })
  }
}

/** The path and query of the newest link of `kind` mailed to `email`, once its message is queued. */
export async function mailedLink(db: Kysely<Database>, email: string, kind: string): Promise<string> {
  let link: string | undefined
  await waitFor(
    async () => {
      const rows = await db
        .selectFrom('mail_outbox')
        .select('text_body')
        .where('recipient', '=', email)
        .where('kind', '=', kind)
        .orderBy('id', 'desc')
        .execute()
      link = /https?:\/\/[^/\s]+(\/dashboard\/\S+\?token=[A-Za-z0-9_-]{43})/.exec(rows[0]?.text_body ?? '')?.[1]
      return link !== undefined
    },
    { what: `a ${kind} message to ${email}` },
  )
  return link!
}

export const OPERATOR = { email: 'ops@example.org', password: 'operator password 2026' }

/**
 * Enrols an authenticator for the account through the cases, as its enrolment page would, with
 * a code of the step before `clock`'s (so the current step's code is still unused); the app.
 */
export async function enrolAuthenticator(
  db: Kysely<Database>,
  account: { id: string; email: string },
  clock: Pick<Clock, 'now'>,
): Promise<Authenticator> {
  const store = { db, key: await secondFactorKey(db) }
  const { secret } = await beginTotpEnrolment(store, account, clock.now())
  const lastStep = stepAt(clock.now()) - 1
  const confirmed = await confirmTotpEnrolment(store, account, totpCodeAt(secret, lastStep), clock.now())
  if (!confirmed.ok) throw new Error('the enrolment code was refused')
  return { secret, clock, lastStep }
}

/**
 * Creates an operator account with an authenticator (operators need one to reach their pages):
 * the authenticator, for a client's `authenticator`.
 */
export async function createOperatorWithAuthenticator(
  db: Kysely<Database>,
  clock: Pick<Clock, 'now'>,
  login: { email: string; password: string } = OPERATOR,
): Promise<Authenticator> {
  const passwordHash = await hashPassword(login.password)
  const account = await createAccount(db, { email: login.email, passwordHash, role: 'operator' }, clock.now())
  return enrolAuthenticator(db, account, clock)
}

/**
 * Creates the operator account, with an authenticator, on the test app and returns a client
 * signed in as it from `ip` (both steps), over a real socket when `socket` is given (`t.send`).
 */
export async function signedInOperator(
  t: Pick<TestContext, 'app' | 'storage' | 'clock'>,
  ip: string,
  socket?: SocketSend,
): Promise<DashboardClient> {
  const operator = new DashboardClient(t.app, ip, socket)
  operator.authenticator = await createOperatorWithAuthenticator(t.storage.db, t.clock)
  const signIn = await operator.signIn(OPERATOR.email, OPERATOR.password)
  if (signIn.statusCode !== 303) throw new Error(`operator sign-in answered ${signIn.statusCode}`)
  return operator
}

/** Makes the partner account of `email` an owner of `organisationId`, working in it (as an approval does). */
export async function makeOwner(db: Kysely<Database>, email: string, organisationId: string): Promise<void> {
  const account = await db.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirstOrThrow()
  await insertMembership(db, { organisationId, accountId: account.id, role: 'owner' }, Date.now())
  await db.updateTable('accounts').set({ organisation_id: organisationId }).where('id', '=', account.id).execute()
}
