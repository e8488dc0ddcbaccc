/**
 * The recovery pages (forgot password, the reset and verification links) and the Account page over
 * a real socket: what each answers, what it changes and what it leaves alone. The rules behind them
 * (lifetimes, limits, races on both engines) are test/cases/account-recovery.test.ts's; here, the
 * pages. One app and database for the file, each test with accounts and client addresses of its
 * own; a manual clock for the link lifetimes, and the outbox awaited, never slept for.
 */
import { randomBytes } from 'node:crypto'
import { Writable } from 'node:stream'
import type { LightMyRequestResponse } from 'fastify'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ManualClock } from '../../src/clock.js'
import type { Storage } from '../../src/storage/connection.js'
import { createTestStorage, type ListeningApp, listeningApp, START, testConfig } from '../helper.js'
import type { HttpRequest } from '../support/http-client.js'
import { waitFor } from '../support/wait-for.js'
import { DashboardClient, mailedLink, OPERATOR, signedInOperator } from './dashboard-client.js'

const PASSWORD = 'a long and memorable phrase'
const NEW_PASSWORD = 'seven orange kites over the harbour'
const FIREFOX_LINUX = 'Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0'
const CHROME_WINDOWS =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36'
const HOUR = 3_600_000
const ACCOUNT = '/dashboard/account'
const RESET_LIMIT = 3

/** What an outsider sees of a response: all but its date, request id and the random cookie values. */
function visible(res: LightMyRequestResponse) {
  const { date: _date, 'x-request-id': _id, 'set-cookie': cookies, ...headers } = res.headers
  const names = ([] as string[]).concat(cookies ?? []).map((cookie) => cookie.replace(/=[^;]*/, '=…'))
  return { status: res.statusCode, headers, cookies: names, body: res.body }
}

const tokenOf = (link: string) => new URL(link, 'http://x').searchParams.get('token')!

/** The page's own content, after the header (whose sign-out form and navigation every page has). */
const mainOf = (res: LightMyRequestResponse) => res.body.slice(res.body.indexOf('<main'))

/** Where a response leads: a 303 to the sign-in page for a client whose session ended. */
const signInAsked = (res: LightMyRequestResponse) =>
  res.statusCode === 303 && String(res.headers.location).startsWith('/dashboard/login')

describe('the recovery and Account pages', () => {
  const clock = new ManualClock(START)
  let storage: Storage
  let listening: ListeningApp
  let addresses = 0
  const logged: string[] = []
  const socket = (request: HttpRequest) => listening.client.request(request)

  beforeAll(async () => {
    storage = await createTestStorage({ catalog: false })
    listening = await listeningApp({
      config: testConfig({
        PUBLIC_URL: 'https://curriculum.example.org',
        PASSWORD_RESET_LIMIT: String(RESET_LIMIT),
      }),
      storage,
      clock,
      logger: pino(
        { level: 'info' },
        new Writable({
          write(chunk, _encoding, done) {
            logged.push(String(chunk))
            done()
          },
        }),
      ),
      pollChanges: false,
    })
  })
  afterAll(async () => {
    await listening?.close()
    await storage?.close()
  })

  /** A browser of its own address: sign-ups, sign-ins and reset requests are limited per address. */
  const browser = (headers: Record<string, string> = {}) =>
    new DashboardClient(listening.app, `198.51.100.${++addresses}`, socket, headers)

  /** A new partner, signed in on the browser returned, its sign-up's verification link queued. */
  async function partner(email: string, headers: Record<string, string> = {}): Promise<DashboardClient> {
    const client = browser(headers)
    expect((await client.signUp(email)).statusCode).toBe(200)
    await mailedLink(storage.db, email, 'verify-email')
    return client
  }

  const account = (email: string) =>
    storage.db.selectFrom('accounts').selectAll().where('email', '=', email).executeTakeFirst()
  const sessionsOf = async (email: string) =>
    storage.db
      .selectFrom('sessions')
      .selectAll()
      .where('account_id', '=', (await account(email))!.id)
      .execute()
  const mails = (recipient: string, kind?: string) => {
    let query = storage.db.selectFrom('mail_outbox').selectAll().where('recipient', '=', recipient)
    if (kind !== undefined) query = query.where('kind', '=', kind)
    return query.orderBy('id').execute()
  }

  /** Asks for a reset link for `email` from a browser of its own and returns the link once it is queued. */
  async function resetLink(email: string): Promise<string> {
    const before = (await mails(email, 'password-reset')).length
    const asked = await browser().post('/dashboard/forgot-password', { email })
    expect(asked.statusCode).toBe(303)
    await waitFor(async () => (await mails(email, 'password-reset')).length > before, {
      what: `a reset link for ${email}`,
    })
    return mailedLink(storage.db, email, 'password-reset')
  }

  describe('forgot password', () => {
    it('is linked from the sign-in page, and asks for the address', async () => {
      const client = browser()
      const signIn = await client.get('/dashboard/login')
      expect(signIn.body).toContain('<a href="/dashboard/forgot-password">Forgot your password?</a>')
      const page = await client.get('/dashboard/forgot-password')
      expect(page.statusCode).toBe(200)
      expect(page.body).toContain('<h1>Forgot your password?</h1>')
      expect(page.body).toContain('<form method="post" action="/dashboard/forgot-password"')
      expect(page.body).toContain('autocomplete="username"')
    })

    it('answers the same for an address with an account, one without, and in other letter case', async () => {
      const email = 'forgetful@partner.example'
      await partner(email)
      const ask = (address: string) => browser().post('/dashboard/forgot-password', { email: address })
      const none = await ask('nobody-here@partner.example')
      const known = await ask(email)
      const shouted = await ask('  Forgetful@PARTNER.example ')
      expect(none.statusCode).toBe(303)
      expect(none.headers.location).toBe('/dashboard/login?notice=reset-requested')
      expect(visible(known)).toEqual(visible(none))
      expect(visible(shouted)).toEqual(visible(none))
      const notice = await browser().get(none.headers.location!)
      expect(notice.body).toContain('If an account has this address, we sent it a link to choose a new password.')
      // The mail is written after the answer: one link for each request of the existing account.
      await waitFor(async () => (await mails(email, 'password-reset')).length === 2, { what: 'two reset links' })
      expect(await mails('nobody-here@partner.example')).toEqual([])
      expect(await mails('forgetful@partner.example', 'password-reset')).toHaveLength(2)
    })

    it('refuses a malformed address with its field error', async () => {
      const res = await browser().post('/dashboard/forgot-password', { email: 'not an address' })
      expect(res.statusCode).toBe(400)
      expect(res.body).toContain('Enter an e-mail address like name@example.org.')
      expect(res.body).toContain('aria-invalid="true"')
      expect(res.body).toContain('value="not an address"')
    })

    it(`refuses more than PASSWORD_RESET_LIMIT (${RESET_LIMIT}) requests an address, with Retry-After`, async () => {
      const client = browser()
      const token = await client.csrf()
      const ask = (n: number) =>
        client.post('/dashboard/forgot-password', { _csrf: token, email: `x${n}@limit.example` })
      for (let n = 0; n < RESET_LIMIT; n++) expect((await ask(n)).statusCode).toBe(303)
      const refused = await ask(RESET_LIMIT)
      expect(refused.statusCode).toBe(429)
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)
      expect(refused.body).toContain('Too many attempts')
      // Another address is not held up by this one.
      expect((await browser().post('/dashboard/forgot-password', { email: 'y@limit.example' })).statusCode).toBe(303)
    })
  })

  describe('the reset link', () => {
    it('shows its form with the account’s address; no, a cut or a forged token is a 404 page', async () => {
      const email = 'reset-form@partner.example'
      await partner(email)
      const link = await resetLink(email)
      const client = browser()
      // As a mail program opens it: no cookie yet, from no page of the site.
      const page = await client.get(link, { 'sec-fetch-site': 'none' })
      expect(page.statusCode).toBe(200)
      expect(page.body).toContain('<h1>Choose a new password</h1>')
      expect(page.body).toContain(`<strong>${email}</strong>`)
      expect(page.body).toContain('autocomplete="new-password"')
      const token = tokenOf(link)
      const forged = randomBytes(32).toString('base64url')
      for (const url of [
        '/dashboard/reset-password',
        '/dashboard/reset-password?token=',
        `/dashboard/reset-password?token=${token.slice(0, 30)}`,
        `/dashboard/reset-password?token=${forged}`,
      ]) {
        const res = await client.get(url)
        expect(res.statusCode, url).toBe(404)
        expect(res.body).toContain('<h1>This link does not work</h1>')
        expect(res.body).toContain('Forgot your password?')
      }
      // A token of another purpose opens no reset form either.
      const verify = tokenOf(await mailedLink(storage.db, email, 'verify-email'))
      expect((await client.get(`/dashboard/reset-password?token=${verify}`)).statusCode).toBe(404)
      expect(
        (await client.post('/dashboard/reset-password', { token: forged, password: NEW_PASSWORD })).statusCode,
      ).toBe(404)
    })

    it('refuses a weak password and still works; a good one signs the account out everywhere, once', async () => {
      const email = 'reset-use@partner.example'
      const signedIn = await partner(email)
      const link = await resetLink(email)
      const token = tokenOf(link)
      const client = browser()
      expect((await client.get(link)).statusCode).toBe(200)
      const weak = await client.post('/dashboard/reset-password', { token, password: 'short one' })
      expect(weak.statusCode).toBe(400)
      expect(weak.body).toContain('Use at least 12 characters')
      expect(weak.body).toContain('aria-invalid="true"')
      expect(weak.body).not.toContain('short one')
      expect((await client.get(link)).statusCode).toBe(200)

      const done = await client.post('/dashboard/reset-password', { token, password: NEW_PASSWORD })
      expect(done.statusCode).toBe(303)
      expect(done.headers.location).toBe('/dashboard/login?notice=password-reset')
      expect((await client.follow(done)).body).toContain('Your new password is set')
      // The browser that was signed in to the account is sent to the sign-in page.
      expect(signInAsked(await signedIn.get('/dashboard/partner'))).toBe(true)
      expect(await sessionsOf(email)).toEqual([])
      // The link proved the address as well.
      expect((await account(email))!.email_verified_at).not.toBeNull()
      expect((await browser().signIn(email, PASSWORD)).statusCode).toBe(401)
      expect((await browser().signIn(email, NEW_PASSWORD)).statusCode).toBe(303)
      expect(await mails(email, 'password-changed')).toHaveLength(1)
      // Used: a 410 page, for the form and for the link.
      for (const res of [
        await client.get(link),
        await client.post('/dashboard/reset-password', { token, password: 'yet another long phrase' }),
      ]) {
        expect(res.statusCode).toBe(410)
        expect(res.body).toContain('<h1>This link was used already</h1>')
      }
      expect((await browser().signIn(email, NEW_PASSWORD)).statusCode).toBe(303)
    })

    it('expires after 1 hour with a 410 page', async () => {
      const email = 'reset-late@partner.example'
      await partner(email)
      const link = await resetLink(email)
      const client = browser()
      clock.advance(HOUR - 1000)
      expect((await client.get(link)).statusCode).toBe(200)
      clock.advance(2000)
      for (const res of [
        await client.get(link),
        await client.post('/dashboard/reset-password', { token: tokenOf(link), password: NEW_PASSWORD }),
      ]) {
        expect(res.statusCode).toBe(410)
        expect(res.body).toContain('<h1>This link has expired</h1>')
      }
      expect((await browser().signIn(email, PASSWORD)).statusCode).toBe(303)
    })

    it('puts its token only in the hidden field, links nowhere off the site, Referrer-Policy same-origin', async () => {
      const email = 'reset-leak@partner.example'
      await partner(email)
      const link = await resetLink(email)
      const token = tokenOf(link)
      const client = browser()
      const page = await client.get(link)
      const weak = await client.post('/dashboard/reset-password', { token, password: 'short' })
      for (const res of [page, weak]) {
        expect(res.body.split(token)).toHaveLength(2)
        expect(res.body).toContain(`<input type="hidden" name="token" value="${token}">`)
        expect(res.headers['referrer-policy']).toBe('same-origin')
        expect(res.headers['cache-control']).toBe('no-store')
        const targets = [...res.body.matchAll(/\b(?:href|src|action)="([^"]*)"/g)].map((m) => m[1]!)
        expect(targets.length).toBeGreaterThan(0)
        for (const target of targets) expect(target, target).toMatch(/^(\/(?!\/)|#)/)
      }
      const done = await client.post('/dashboard/reset-password', { token, password: NEW_PASSWORD })
      expect(JSON.stringify(done.headers)).not.toContain(token)
      // In the log only where the message is held (SMTP_URL unset): the access log drops query strings.
      const lines = logged.filter((line) => line.includes(token))
      expect(lines).toHaveLength(1)
      expect(lines[0]).toContain('mail kept in the outbox (SMTP_URL is unset): password-reset message')
      expect(logged.some((line) => line.includes('"path":"/dashboard/reset-password"'))).toBe(true)
    })

    it('sent twice at once, sets the password once: one 303, one 410', async () => {
      const email = 'reset-race@partner.example'
      await partner(email)
      const token = tokenOf(await resetLink(email))
      const [first, second] = [browser(), browser()]
      const [one, two] = await Promise.all([first.csrf(), second.csrf()])
      const answers = await Promise.all([
        first.post('/dashboard/reset-password', { _csrf: one, token, password: NEW_PASSWORD }),
        second.post('/dashboard/reset-password', { _csrf: two, token, password: 'a different long passphrase' }),
      ])
      expect(answers.map((res) => res.statusCode).sort()).toEqual([303, 410])
      const winner = answers[0]!.statusCode === 303 ? NEW_PASSWORD : 'a different long passphrase'
      expect((await browser().signIn(email, winner)).statusCode).toBe(303)
      const resets = await storage.db
        .selectFrom('audit_log')
        .select('id')
        .where('action', '=', 'account.password-reset')
        .where('actor', '=', `account:${email}`)
        .execute()
      expect(resets).toHaveLength(1)
      expect(await mails(email, 'password-changed')).toHaveLength(1)
    })
  })

  it('asks a new partner to verify before applying, sends up to 3 links an hour, then shows the form', async () => {
    const email = 'verify-me@partner.example'
    const client = await partner(email)
    const first = await mailedLink(storage.db, email, 'verify-email')
    const page = await client.get('/dashboard/partner/application')
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain('<h1>Verify your address to apply</h1>')
    expect(page.body).toContain('action="/dashboard/account/verify"')
    const applied = await client.post('/dashboard/partner/application', {
      organisationName: 'Verify Me Ltd',
      website: 'https://verify-me.example',
      contactName: 'Vera Fy',
      contactEmail: email,
      intendedUse: 'A reading tracker for the pupils of our partner schools.',
    })
    expect(applied.statusCode).toBe(409)
    expect(applied.body).toContain('Verify your e-mail address before applying')
    const id = (await account(email))!.id
    expect(await storage.db.selectFrom('applications').select('id').where('account_id', '=', id).execute()).toEqual([])

    // The sign-up sent the first link; two more are sent on request, and then the hour's are used up.
    for (const notice of ['verification-sent', 'verification-sent', 'verification-limited']) {
      const res = await client.post(`${ACCOUNT}/verify`)
      expect(res.statusCode).toBe(303)
      expect(res.headers.location).toBe(`${ACCOUNT}?notice=${notice}`)
    }
    const limited = await client.get(`${ACCOUNT}?notice=verification-limited`)
    expect(limited.body).toContain('We sent 3 verification links in the last hour already')
    expect((await client.get(`${ACCOUNT}?notice=verification-sent`)).body).toContain(
      'We sent a verification link to your address.',
    )
    expect(await mails(email, 'verify-email')).toHaveLength(3)

    const verified = await client.useMailedLink(storage.db, email, 'verify-email')
    expect(verified.statusCode).toBe(303)
    expect(verified.headers.location).toBe(`${ACCOUNT}?notice=email-verified`)
    const shown = await client.follow(verified)
    expect(shown.body).toContain('Your e-mail address is verified.')
    expect(shown.body).toMatch(new RegExp(`You sign in as <strong>${email}</strong>, verified 2026-`))
    // The older links retired with it.
    expect((await client.get(first)).statusCode).toBe(410)
    const form = await client.get('/dashboard/partner/application')
    expect(form.body).toContain('<h1>Apply for live access</h1>')
    expect(form.body).toContain('name="organisationName"')
  })

  describe('the Account page', () => {
    it('lists this session and another browser’s, whose End button signs that browser out', async () => {
      const email = 'sessions@partner.example'
      const here = await partner(email, { 'user-agent': FIREFOX_LINUX })
      const there = browser({ 'user-agent': CHROME_WINDOWS })
      expect((await there.signIn(email)).statusCode).toBe(303)
      const sessions = await sessionsOf(email)
      const other = sessions.find((s) => s.user_agent === CHROME_WINDOWS)!
      const mine = sessions.find((s) => s.user_agent === FIREFOX_LINUX)!
      expect(other.last_address).not.toBe(mine.last_address)

      const page = await here.get(ACCOUNT)
      expect(page.statusCode).toBe(200)
      const rows = mainOf(page).match(/<tr>.*?<\/tr>/gs)!
      const current = rows.filter((row) => row.includes('This session'))
      expect(current).toHaveLength(1)
      expect(current[0]).toContain(`<td>Firefox on Linux</td><td>${mine.last_address}</td>`)
      const theirs = rows.find((row) => row.includes(`${ACCOUNT}/sessions/${other.id}/end`))!
      expect(theirs).toContain(`<td>Chrome on Windows</td><td>${other.last_address}</td>`)
      expect(theirs).toContain(`End<span class="visually-hidden"> the session from ${other.last_address}</span>`)
      expect(page.body).not.toContain(`${ACCOUNT}/sessions/${mine.id}/end`)

      const ended = await here.post(`${ACCOUNT}/sessions/${other.id}/end`)
      expect(ended.statusCode).toBe(303)
      expect(ended.headers.location).toBe(`${ACCOUNT}?notice=session-ended`)
      const after = await here.follow(ended)
      expect(after.body).toContain('The session has ended; that browser is signed out.')
      expect(after.body).not.toContain('Chrome on Windows')
      expect(signInAsked(await there.get(ACCOUNT))).toBe(true)
      expect((await here.get(ACCOUNT)).statusCode).toBe(200)
      // This session's own id, which has no button, signs this browser out.
      const own = await here.post(`${ACCOUNT}/sessions/${mine.id}/end`)
      expect(own.headers.location).toBe('/dashboard/login?notice=signed-out')
      expect(signInAsked(await here.get(ACCOUNT))).toBe(true)
      expect(await sessionsOf(email)).toEqual([])
    })

    it('says "session-gone" for another account’s session, which goes on', async () => {
      const here = await partner('nosy@partner.example')
      const victim = await partner('victim@partner.example')
      const [target] = await sessionsOf('victim@partner.example')
      const res = await here.post(`${ACCOUNT}/sessions/${target!.id}/end`)
      expect(res.statusCode).toBe(303)
      expect(res.headers.location).toBe(`${ACCOUNT}?notice=session-gone`)
      expect((await here.follow(res)).body).toContain('That session had ended already.')
      expect(await sessionsOf('victim@partner.example')).toHaveLength(1)
      expect((await victim.get(ACCOUNT)).statusCode).toBe(200)
      // A made-up id is the same.
      expect((await here.post(`${ACCOUNT}/sessions/not-a-session/end`)).headers.location).toBe(
        `${ACCOUNT}?notice=session-gone`,
      )
    })

    it('changes the password given the current one, ending the other sessions, telling the address', async () => {
      const email = 'change-password@partner.example'
      const here = await partner(email)
      const elsewhere = browser()
      expect((await elsewhere.signIn(email)).statusCode).toBe(303)
      const before = (await account(email))!

      const wrong = await here.post(`${ACCOUNT}/password`, {
        currentPassword: 'not my password at all',
        newPassword: NEW_PASSWORD,
      })
      expect(wrong.statusCode).toBe(400)
      expect(wrong.body).toContain(
        '<p class="field-error" id="currentPassword-error">The current password is not right.',
      )
      expect(wrong.body).toContain('aria-invalid="true"')
      expect((await account(email))!.password_hash).toBe(before.password_hash)
      expect(await sessionsOf(email)).toHaveLength(2)
      expect(await mails(email, 'password-changed')).toEqual([])

      const weak = await here.post(`${ACCOUNT}/password`, { currentPassword: PASSWORD, newPassword: 'password' })
      expect(weak.statusCode).toBe(400)
      expect(weak.body).toContain('id="newPassword-error"')
      expect((await account(email))!.password_hash).toBe(before.password_hash)

      const changed = await here.post(`${ACCOUNT}/password`, { currentPassword: PASSWORD, newPassword: NEW_PASSWORD })
      expect(changed.statusCode).toBe(303)
      expect(changed.headers.location).toBe(`${ACCOUNT}?notice=password-changed`)
      expect((await here.follow(changed)).body).toContain(
        'Your password is changed, and your other sessions have ended.',
      )
      expect(signInAsked(await elsewhere.get(ACCOUNT))).toBe(true)
      expect(await sessionsOf(email)).toHaveLength(1)
      expect(await mails(email, 'password-changed')).toHaveLength(1)
      expect((await browser().signIn(email, PASSWORD)).statusCode).toBe(401)
      expect((await browser().signIn(email, NEW_PASSWORD)).statusCode).toBe(303)
    })

    it('changes the address through a link to the new one, telling the old one', async () => {
      const email = 'old-address@partner.example'
      const next = 'new-address@partner.example'
      const here = await partner(email)
      const wrong = await here.post(`${ACCOUNT}/email`, { newEmail: next, emailPassword: 'not my password at all' })
      expect(wrong.statusCode).toBe(400)
      expect(wrong.body).toContain('The current password is not right.')
      expect(wrong.body).toContain(`value="${next}"`)
      expect(await mails(next)).toEqual([])

      const asked = await here.post(`${ACCOUNT}/email`, {
        newEmail: 'New-Address@Partner.example',
        emailPassword: PASSWORD,
      })
      expect(asked.statusCode).toBe(303)
      expect(asked.headers.location).toBe(`${ACCOUNT}?notice=email-change-sent`)
      expect((await mails(next)).map((m) => m.kind)).toEqual(['email-change'])
      expect((await mails(email, 'email-change-notice')).map((m) => m.text_body)).toEqual([
        expect.stringContaining(`asked to change its address to ${next}`),
      ])
      // Nothing changes until the link is used.
      expect((await account(email))!.email).toBe(email)

      const confirmed = await here.useMailedLink(storage.db, next, 'email-change')
      expect(confirmed.statusCode).toBe(303)
      expect(confirmed.headers.location).toBe(`${ACCOUNT}?notice=email-changed`)
      const shown = await here.follow(confirmed)
      expect(shown.body).toContain('The new address is the one you sign in with now')
      expect(shown.body).toMatch(new RegExp(`You sign in as <strong>${next}</strong>, verified 2026-`))
      expect((await browser().signIn(email)).statusCode).toBe(401)
      expect((await browser().signIn(next)).statusCode).toBe(303)
    })

    it('refuses, when its link is used, an address another account has, keeping the link usable', async () => {
      const email = 'wants-taken@partner.example'
      const here = await partner(email)
      await partner('taken-address@partner.example')
      const asked = await here.post(`${ACCOUNT}/email`, {
        newEmail: 'taken-address@partner.example',
        emailPassword: PASSWORD,
      })
      // The form does not say whether the address has an account.
      expect(asked.headers.location).toBe(`${ACCOUNT}?notice=email-change-sent`)
      const link = await mailedLink(storage.db, 'taken-address@partner.example', 'email-change')
      const refused = await here.post(`${ACCOUNT}/confirm-email`, { token: tokenOf(link) })
      expect(refused.statusCode).toBe(409)
      expect(refused.body).toContain('Another account has this e-mail address now.')
      expect((await account(email))!.email).toBe(email)
      expect((await here.get(link)).statusCode).toBe(200)
    })

    it('signs out everywhere, this browser too', async () => {
      const email = 'everywhere@partner.example'
      const here = await partner(email)
      const elsewhere = browser()
      expect((await elsewhere.signIn(email)).statusCode).toBe(303)
      const res = await here.post(`${ACCOUNT}/sign-out-everywhere`)
      expect(res.statusCode).toBe(303)
      expect(res.headers.location).toBe('/dashboard/login?notice=signed-out-everywhere')
      expect((await here.follow(res)).body).toContain('Every session of your account has ended, this one too.')
      expect(signInAsked(await here.get(ACCOUNT))).toBe(true)
      expect(signInAsked(await elsewhere.get(ACCOUNT))).toBe(true)
      expect(await sessionsOf(email)).toEqual([])
    })

    it('is for every signed-in account, partner and operator, and sends anyone else to sign in', async () => {
      const anonymous = await browser().get(ACCOUNT)
      expect(anonymous.statusCode).toBe(303)
      expect(anonymous.headers.location).toBe('/dashboard/login?next=%2Fdashboard%2Faccount')
      const operator = await signedInOperator({ app: listening.app, storage, clock }, '198.51.100.250', socket)
      const back = await browser().post('/dashboard/login', { ...OPERATOR, next: ACCOUNT })
      expect(back.statusCode).toBe(303)
      // The operator has a second factor: the code step comes first, and keeps where to go next.
      expect(back.headers.location).toBe(`/dashboard/sign-in/code?next=${encodeURIComponent(ACCOUNT)}`)
      const partnerClient = await partner('both-roles@partner.example')
      for (const [client, who] of [
        [operator, 'ops@example.org (operator)'],
        [partnerClient, 'both-roles@partner.example (partner)'],
      ] as const) {
        const page = await client.get(ACCOUNT)
        expect(page.statusCode, who).toBe(200)
        expect(page.body).toContain('<h1>Your account</h1>')
        expect(page.body).toContain(`<span class="who">${who}</span>`)
        expect(page.body).toContain(`<a href="${ACCOUNT}" aria-current="page">Account</a>`)
      }
    })
  })

  it('refuses every new form without its CSRF token, changing nothing', async () => {
    const email = 'csrf@partner.example'
    const here = await partner(email)
    const elsewhere = browser({ 'user-agent': CHROME_WINDOWS })
    expect((await elsewhere.signIn(email)).statusCode).toBe(303)
    const verifyToken = tokenOf(await mailedLink(storage.db, email, 'verify-email'))
    const resetToken = tokenOf(await resetLink(email))
    expect(
      (await here.post(`${ACCOUNT}/email`, { newEmail: 'csrf-new@partner.example', emailPassword: PASSWORD }))
        .statusCode,
    ).toBe(303)
    const changeToken = tokenOf(await mailedLink(storage.db, 'csrf-new@partner.example', 'email-change'))
    const other = (await sessionsOf(email)).find((s) => s.user_agent === CHROME_WINDOWS)!
    const snapshot = async () => ({
      account: await account(email),
      sessions: (await sessionsOf(email)).length,
      mails: (await storage.db.selectFrom('mail_outbox').select('id').execute()).length,
      audit: (await storage.db.selectFrom('audit_log').select('id').execute()).length,
    })
    const before = await snapshot()

    const forms: [string, Record<string, string | null>][] = [
      ['/dashboard/forgot-password', { email }],
      ['/dashboard/reset-password', { token: resetToken, password: NEW_PASSWORD }],
      ['/dashboard/verify-email', { token: verifyToken }],
      ['/dashboard/account/confirm-email', { token: changeToken }],
      [`${ACCOUNT}/verify`, {}],
      [`${ACCOUNT}/password`, { currentPassword: PASSWORD, newPassword: NEW_PASSWORD }],
      [`${ACCOUNT}/email`, { newEmail: 'csrf-other@partner.example', emailPassword: PASSWORD }],
      [`${ACCOUNT}/sessions/${other.id}/end`, {}],
      [`${ACCOUNT}/sign-out-everywhere`, {}],
    ]
    const stranger = browser()
    await stranger.csrf()
    for (const [url, form] of forms) {
      expect((await here.post(url, { ...form, _csrf: null })).statusCode, url).toBe(403)
      expect((await here.post(url, { ...form, _csrf: 'forged' })).statusCode, url).toBe(403)
      // The pages a visitor without a session may post to refuse a visitor's missing token too.
      if (!url.startsWith(`${ACCOUNT}/`) || url.endsWith('/confirm-email'))
        expect((await stranger.post(url, { ...form, _csrf: null })).statusCode, url).toBe(403)
    }
    expect(await snapshot()).toEqual(before)
    expect((await here.get(ACCOUNT)).statusCode).toBe(200)
    expect((await elsewhere.get(ACCOUNT)).statusCode).toBe(200)
    for (const link of [
      `/dashboard/reset-password?token=${resetToken}`,
      `/dashboard/verify-email?token=${verifyToken}`,
      `${ACCOUNT}/confirm-email?token=${changeToken}`,
    ])
      expect((await stranger.get(link)).statusCode, link).toBe(200)
    // The refused reset requests queued nothing after their answer: the next one queues exactly one link.
    const resets = (await mails(email, 'password-reset')).length
    expect((await here.post('/dashboard/forgot-password', { email })).statusCode).toBe(303)
    await waitFor(async () => (await mails(email, 'password-reset')).length > resets, { what: 'a reset link' })
    expect(await mails(email, 'password-reset')).toHaveLength(resets + 1)
  })
})
