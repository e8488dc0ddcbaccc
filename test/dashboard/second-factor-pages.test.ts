/**
 * Two-step sign-in's pages over a real socket: enrolment on the Account page (a wrong code refused,
 * a right one takes effect, the recovery codes shown once), the sign-in's second step (a right
 * code, a replayed one, a recovery code once, the guess limit, a waiting session's 10 minutes,
 * every other page closed meanwhile), the operator's requirement, and CSRF on each new form.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ManualClock } from '../../src/clock.js'
import { hashPassword } from '../../src/domain/passwords.js'
import { createAccount } from '../../src/storage/account-repository.js'
import type { Storage } from '../../src/storage/connection.js'
import { createTestStorage, type ListeningApp, listeningApp, START, testConfig } from '../helper.js'
import type { HttpRequest } from '../support/http-client.js'
import { DashboardClient, OPERATOR, stepAt, totpCodeAt } from './dashboard-client.js'

const ENROL = '/dashboard/account/two-step'
const CODE = '/dashboard/sign-in/code'
const STUDENTS = '/dashboard/operator/students'
const RECOVERY = /<li><code>([0-9a-z]{5}-[0-9a-z]{5})<\/code><\/li>/g

describe('two-step sign-in pages', () => {
  const clock = new ManualClock(START)
  let storage: Storage
  let listening: ListeningApp
  let operator: DashboardClient
  let socket: (request: HttpRequest) => ReturnType<ListeningApp['client']['request']>
  let applicationId: string
  let secret = ''
  let recoveryCodes: string[] = []

  beforeAll(async () => {
    storage = await createTestStorage()
    listening = await listeningApp({ config: testConfig(), storage, clock, logger: false, pollChanges: false })
    socket = (request: HttpRequest) => listening.client.request(request)
    const partner = new DashboardClient(listening.app, '192.0.2.91', socket)
    expect((await partner.signUp('partner@two-step.example')).statusCode).toBe(200)
    expect((await partner.useMailedLink(storage.db, 'partner@two-step.example')).statusCode).toBe(303)
    const applied = await partner.post('/dashboard/partner/application', {
      organisationName: 'Two Step Reading',
      website: 'https://two-step.example',
      contactName: 'Contact Person',
      contactEmail: 'contact@two-step.example',
      intendedUse: 'Showing learners their next lesson in our reading app.',
      scopes: ['students:read'],
      acknowledgement: 'yes',
    })
    expect(applied.statusCode).toBe(303)
    applicationId = (await storage.db.selectFrom('applications').select('id').executeTakeFirstOrThrow()).id
    const passwordHash = await hashPassword(OPERATOR.password)
    await createAccount(storage.db, { email: OPERATOR.email, passwordHash, role: 'operator' }, clock.now())
    operator = new DashboardClient(listening.app, '192.0.2.90', socket)
    expect((await operator.signIn(OPERATOR.email, OPERATOR.password)).statusCode).toBe(303)
  })
  afterAll(async () => {
    await listening?.close()
    await storage?.close()
  })

  const audit = (action: string) =>
    storage.db.selectFrom('audit_log').selectAll().where('action', '=', `second_factor.${action}`).execute()
  const codeNow = () => totpCodeAt(secret, stepAt(clock.now()))
  const applicationState = async () =>
    (await storage.db.selectFrom('applications').select('state').where('id', '=', applicationId).executeTakeFirst())
      ?.state
  /** A new 30-second step, so the authenticator shows a code not used yet. */
  const nextStep = () => clock.advance(30_000)

  it('keeps an operator without a second factor to enrolment, the Account page and sign-out', async () => {
    for (const page of ['/dashboard/operator/applications', STUDENTS, '/dashboard/operator/audit']) {
      const res = await operator.get(page)
      expect(res.statusCode, page).toBe(303)
      expect(res.headers.location).toBe(`${ENROL}?notice=two-step-required`)
    }
    const approve = await operator.post(`/dashboard/operator/applications/${applicationId}/approve`, {})
    expect(approve.statusCode).toBe(403)
    expect(approve.body).toContain('Two-step sign-in first')
    expect(await applicationState()).toBe('submitted')
    expect((await operator.get('/dashboard/account')).body).toContain('Operator accounts need it')
    const enrol = await operator.get(`${ENROL}?notice=two-step-required`)
    expect(enrol.statusCode).toBe(200)
    expect(enrol.body).toContain('so they need two-step sign-in: set it up here')
  })

  it('refuses each new form without its CSRF token', async () => {
    for (const form of ['begin', 'confirm', 'recovery-codes', 'remove']) {
      const res = await operator.post(`${ENROL}/${form}`, { _csrf: null, code: '123456' })
      expect(res.statusCode, form).toBe(403)
      expect(res.body).toContain('This form has expired')
    }
    expect(await audit('totp_begun')).toEqual([])
  })

  it('enrols: the QR code and key, a wrong code refused, a right one takes effect, codes shown once', async () => {
    const begun = await operator.post(`${ENROL}/begin`)
    expect(begun.statusCode).toBe(303)
    const page = await operator.follow(begun)
    expect(page.statusCode).toBe(200)
    expect(page.body).toMatch(/<svg [^>]*role="img" aria-label="QR code that adds this account/)
    const written = /<code class="secret" id="totp-secret">([A-Z2-7 ]+)<\/code>/.exec(page.body)![1]!
    expect(written).toMatch(/^([A-Z2-7]{4} )+[A-Z2-7]{1,4}$/)
    secret = written.replace(/ /g, '')
    expect(await audit('totp_begun')).toHaveLength(1)

    const wrong = String((Number(codeNow()) + 1) % 1_000_000).padStart(6, '0')
    const refused = await operator.post(`${ENROL}/confirm`, { code: wrong })
    expect(refused.statusCode).toBe(400)
    expect(refused.body).toContain('That code is not right.')
    expect(refused.body).toContain('id="totp-secret"')
    expect((await operator.get(STUDENTS)).statusCode).toBe(303)

    const confirmed = await operator.post(`${ENROL}/confirm`, { code: codeNow() })
    expect(confirmed.statusCode).toBe(200)
    recoveryCodes = [...confirmed.body.matchAll(RECOVERY)].map((m) => m[1]!)
    expect(recoveryCodes).toHaveLength(10)
    expect(confirmed.body).toContain('This is the only time\nthey are shown.')
    expect(await audit('totp_confirmed')).toHaveLength(1)

    // Not shown again: the enrolment page now sends to the Account page, which lists no code.
    const again = await operator.get(ENROL)
    expect(again.statusCode).toBe(303)
    const account = await operator.get('/dashboard/account')
    expect(account.body).toContain('10 unused recovery codes')
    for (const code of recoveryCodes) expect(account.body).not.toContain(code)

    expect((await operator.get(STUDENTS)).statusCode).toBe(200)
    expect((await operator.post(`/dashboard/operator/applications/${applicationId}/approve`, {})).statusCode).toBe(303)
    expect(await applicationState()).toBe('approved')
  })

  it('asks for the code after the password, closes every other page meanwhile, and keeps `next`', async () => {
    expect((await operator.post('/dashboard/logout')).statusCode).toBe(303)
    const password = await operator.post('/dashboard/login', { ...OPERATOR, next: STUDENTS })
    expect(password.statusCode).toBe(303)
    expect(password.headers.location).toBe(`${CODE}?next=${encodeURIComponent(STUDENTS)}`)
    for (const page of [STUDENTS, '/dashboard/account', ENROL, '/dashboard/login', '/dashboard/partner']) {
      const res = await operator.get(page)
      expect(res.statusCode, page).toBe(303)
      expect(res.headers.location, page).toBe(CODE)
    }
    expect((await operator.post('/dashboard/account/verify')).statusCode).toBe(403)
    expect((await operator.post(`${ENROL}/begin`)).statusCode).toBe(403)
    const page = await operator.get(password.headers.location!)
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain('autocomplete="one-time-code"')
    expect((await operator.post(CODE, { _csrf: null, code: codeNow(), next: STUDENTS })).statusCode).toBe(403)

    nextStep()
    const waiting = operator.cookies.get('cur_session')
    const done = await operator.post(CODE, { code: codeNow(), next: STUDENTS })
    expect(done.statusCode).toBe(303)
    expect(done.headers.location).toBe(STUDENTS)
    expect(operator.cookies.get('cur_session')).not.toBe(waiting)
    expect((await operator.get(STUDENTS)).statusCode).toBe(200)
    expect(await audit('totp_verified')).toHaveLength(1)
  })

  it('refuses a replayed code, and takes a recovery code once, saying how many remain', async () => {
    const replayed = codeNow()
    await operator.post('/dashboard/logout')
    await operator.post('/dashboard/login', OPERATOR)
    const again = await operator.post(CODE, { code: replayed })
    expect(again.statusCode).toBe(400)
    expect(again.body).toContain('That code was used already.')
    expect(again.body).toContain('4 more tries')

    const recovery = await operator.post(CODE, { code: recoveryCodes[0]!.toUpperCase() })
    expect(recovery.statusCode).toBe(200)
    expect(recovery.body).toContain('You have <strong>9 recovery codes</strong> left.')
    expect((await operator.get(STUDENTS)).statusCode).toBe(200)
    expect((await audit('recovery_code_used')).map((row) => JSON.parse(row.detail!))).toEqual([{ codes_left: 9 }])

    await operator.post('/dashboard/logout')
    await operator.post('/dashboard/login', OPERATOR)
    const used = await operator.post(CODE, { code: recoveryCodes[0]! })
    expect(used.statusCode).toBe(400)
    expect(used.body).toContain('That code is not right.')
    expect((await audit('code_refused')).map((row) => JSON.parse(row.detail!).reason)).toEqual(['replayed', 'wrong'])
  })

  it('ends a waiting session after 10 minutes', async () => {
    await operator.post('/dashboard/logout')
    await operator.post('/dashboard/login', OPERATOR)
    clock.advance(10 * 60_000 + 1)
    const page = await operator.get(CODE)
    expect(page.statusCode).toBe(303)
    expect(page.headers.location).toBe('/dashboard/login?notice=two-step-expired')
    expect((await operator.get(page.headers.location!)).body).toContain('the step that asks for the code lasts 10')
  })

  it('refuses every code at the guess limit, with the refusal page, until the window ends', async () => {
    clock.advance(16 * 60_000)
    await operator.post('/dashboard/login', OPERATOR)
    for (let i = 0; i < 4; i++) expect((await operator.post(CODE, { code: 'aaaaa-aaaaa' })).statusCode).toBe(400)
    const limit = await operator.post(CODE, { code: 'aaaaa-aaaaa' })
    expect(limit.statusCode).toBe(429)
    expect(limit.body).toContain('Too many wrong codes')
    expect(Number(limit.headers['retry-after'])).toBeGreaterThan(0)
    // The waiting session ended with it; a right code after the password is refused too, unchecked.
    expect((await operator.get(CODE)).headers.location).toBe('/dashboard/login?notice=two-step-expired')
    await operator.post('/dashboard/login', OPERATOR)
    nextStep()
    expect((await operator.post(CODE, { code: codeNow() })).statusCode).toBe(429)
    clock.advance(15 * 60_000)
    await operator.post('/dashboard/login', OPERATOR)
    expect((await operator.post(CODE, { code: codeNow() })).statusCode).toBe(303)
    expect((await operator.get(STUDENTS)).statusCode).toBe(200)
  })

  it('regenerates the recovery codes and turns two-step sign-in off, each with a current code', async () => {
    const wrong = await operator.post(`${ENROL}/recovery-codes`, { regenerateCode: '000000' })
    expect(wrong.statusCode).toBe(400)
    expect(wrong.body).toMatch(/That code (is not right|was used already)/)
    nextStep()
    const regenerated = await operator.post(`${ENROL}/recovery-codes`, { regenerateCode: codeNow() })
    expect(regenerated.statusCode).toBe(200)
    const fresh = [...regenerated.body.matchAll(RECOVERY)].map((m) => m[1]!)
    expect(fresh).toHaveLength(10)
    expect(fresh).not.toContain(recoveryCodes[1])
    expect(await audit('recovery_codes_regenerated')).toHaveLength(1)

    const off = await operator.post(`${ENROL}/remove`, { removeCode: fresh[0]! })
    expect(off.statusCode).toBe(303)
    expect(off.headers.location).toBe('/dashboard/account?notice=two-step-off')
    expect((await audit('totp_removed')).map((row) => row.actor)).toEqual([`account:${OPERATOR.email}`])
    // Off again, the operator is back to enrolment only.
    expect((await operator.get(STUDENTS)).headers.location).toBe(`${ENROL}?notice=two-step-required`)
  })

  it('leaves a partner without a second factor alone', async () => {
    const partner = new DashboardClient(listening.app, '192.0.2.92', socket)
    expect((await partner.signIn('partner@two-step.example')).headers.location).toBe('/dashboard/partner')
    expect((await partner.get('/dashboard/partner')).statusCode).toBe(200)
    expect((await partner.get('/dashboard/account')).body).toContain('Set up two-step sign-in')
  })
})
