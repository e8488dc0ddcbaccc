/**
 * The Operators page over a real socket: admins reach it and others get 403 and no link; an
 * invitation's mailed link signs up a new operator, who must enrol a second factor before any
 * operator page; roles change and removals end sessions; the last admin stays; CSRF on each form.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ManualClock } from '../../src/clock.js'
import type { Storage } from '../../src/storage/connection.js'
import { createTestStorage, type ListeningApp, listeningApp, START, testConfig } from '../helper.js'
import type { HttpRequest } from '../support/http-client.js'
import {
  createOperatorWithAuthenticator,
  DashboardClient,
  mailedLink,
  OPERATOR,
  stepAt,
  totpCodeAt,
} from './dashboard-client.js'

const OPERATORS = '/dashboard/operator/operators'
const ENROL = '/dashboard/account/two-step'
const NEW_PASSWORD = 'a long operator phrase 2026'

describe('the Operators page', () => {
  const clock = new ManualClock(START)
  let storage: Storage
  let listening: ListeningApp
  let admin: DashboardClient
  /** The operator invited in the third test, removed in the last. */
  let bo: DashboardClient
  let socket: (request: HttpRequest) => ReturnType<ListeningApp['client']['request']>

  beforeAll(async () => {
    storage = await createTestStorage()
    listening = await listeningApp({ config: testConfig(), storage, clock, logger: false, pollChanges: false })
    socket = (request: HttpRequest) => listening.client.request(request)
    admin = new DashboardClient(listening.app, '192.0.2.70', socket)
    admin.authenticator = await createOperatorWithAuthenticator(storage.db, clock)
    expect((await admin.signIn(OPERATOR.email, OPERATOR.password)).statusCode).toBe(303)
  })
  afterAll(async () => {
    await listening?.close()
    await storage?.close()
  })

  const idOf = async (email: string) =>
    (await storage.db.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id
  const audit = async (action: string) =>
    (await storage.db.selectFrom('audit_log').select('actor').where('action', '=', action).execute()).map(
      (r) => r.actor,
    )

  /** Invites `email` as `role`, then signs the invited person up through the mailed link and enrols. */
  async function join(email: string, role: 'admin' | 'operator', ip: string): Promise<DashboardClient> {
    const invited = await admin.post(`${OPERATORS}/invite`, { email, role })
    expect(invited.statusCode).toBe(303)
    expect(invited.headers.location).toBe(`${OPERATORS}?notice=operator-invited`)
    const link = await mailedLink(storage.db, email, 'invitation')
    expect(link).toMatch(/^\/dashboard\/invitations\/operator\?token=/)
    const person = new DashboardClient(listening.app, ip, socket)
    const page = await person.get(link)
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain(role === 'admin' ? 'operator admin' : 'as <strong>operator</strong>')
    const token = new URL(link, 'http://x').searchParams.get('token')!
    const weak = await person.post('/dashboard/invitations/operator', { token, password: 'short' })
    expect(weak.statusCode).toBe(400)
    const accepted = await person.post('/dashboard/invitations/operator', { token, password: NEW_PASSWORD })
    expect(accepted.statusCode).toBe(303)
    expect(accepted.headers.location).toBe(`${ENROL}?notice=two-step-required`)
    // Signed in, but only enrolment opens until a second factor is set up.
    const closed = await person.get('/dashboard/operator/applications')
    expect(closed.headers.location).toBe(`${ENROL}?notice=two-step-required`)
    const begun = await person.follow(await person.post(`${ENROL}/begin`))
    const secret = /<code class="secret" id="totp-secret">([A-Z2-7 ]+)<\/code>/.exec(begun.body)![1]!.replace(/ /g, '')
    const confirmed = await person.post(`${ENROL}/confirm`, { code: totpCodeAt(secret, stepAt(clock.now())) })
    expect(confirmed.statusCode).toBe(200)
    expect((await person.get('/dashboard/operator/applications')).statusCode).toBe(200)
    // The link worked once.
    const again = await new DashboardClient(listening.app, '192.0.2.79', socket).get(link)
    expect(again.statusCode).toBe(410)
    return person
  }

  it('shows the operators to an admin, with the link in the navigation', async () => {
    const page = await admin.get(OPERATORS)
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain(`<a href="${OPERATORS}" aria-current="page">Operators</a>`)
    expect(page.body).toContain('ops@example.org (you)')
    expect(page.body).toContain('operator admin')
  })

  it('refuses each form without its CSRF token, changing nothing', async () => {
    const id = await idOf(OPERATOR.email)
    for (const path of ['invite', `${id}/role`, `${id}/remove`, 'invitations/x/revoke']) {
      const res = await admin.post(`${OPERATORS}/${path}`, { _csrf: null, email: 'x@ops.example', role: 'operator' })
      expect(res.statusCode, path).toBe(403)
      expect(res.body).toContain('This form has expired')
    }
    const visitor = new DashboardClient(listening.app, '192.0.2.78', socket)
    const accept = await visitor.post('/dashboard/invitations/operator', { _csrf: null, token: 'x', password: 'y' })
    expect(accept.statusCode).toBe(403)
    expect(await audit('operator.invite')).toEqual([])
  })

  it('invites an operator who signs up through the link, enrols, and reaches every page but this one', async () => {
    bo = await join('bo@ops.example', 'operator', '192.0.2.71')
    const refused = await bo.get(OPERATORS)
    expect(refused.statusCode).toBe(403)
    expect(refused.body).toContain('Only an operator admin manages operators')
    expect((await bo.get('/dashboard/operator/audit')).body).not.toContain(`href="${OPERATORS}"`)
    expect((await bo.post(`${OPERATORS}/invite`, { email: 'c@ops.example', role: 'admin' })).statusCode).toBe(403)
    const list = await admin.get(OPERATORS)
    expect(list.body).toContain('bo@ops.example')
    expect(await audit('operator.invite')).toEqual(['account:ops@example.org'])
    expect(await audit('operator.join')).toEqual(['account:bo@ops.example'])
  })

  it('refuses an address that has an account, and an invitation link opened while signed in', async () => {
    const taken = await admin.post(`${OPERATORS}/invite`, { email: 'bo@ops.example', role: 'admin' })
    expect(taken.statusCode).toBe(400)
    expect(taken.body).toContain('has an account already')
    await admin.post(`${OPERATORS}/invite`, { email: 'dee@ops.example', role: 'operator' })
    const link = await mailedLink(storage.db, 'dee@ops.example', 'invitation')
    const signedIn = await admin.get(link)
    expect(signedIn.statusCode).toBe(409)
    expect(signedIn.body).toContain('Sign out first')
    const revoke = /invitations\/([0-9a-f-]{36})\/revoke/.exec((await admin.get(OPERATORS)).body)![1]!
    expect((await admin.post(`${OPERATORS}/invitations/${revoke}/revoke`)).statusCode).toBe(303)
    expect((await new DashboardClient(listening.app, '192.0.2.77', socket).get(link)).statusCode).toBe(410)
  })

  it('changes roles, keeps the last admin, and ends a removed operator’s sessions at once', async () => {
    const cy = await join('cy@ops.example', 'operator', '192.0.2.72')
    const me = await idOf(OPERATOR.email)
    const alone = await admin.post(`${OPERATORS}/${me}/role`, { role: 'operator' })
    expect(alone.statusCode).toBe(409)
    expect(alone.body).toContain('needs an operator admin')
    const promoted = await admin.post(`${OPERATORS}/${await idOf('cy@ops.example')}/role`, { role: 'admin' })
    expect(promoted.headers.location).toBe(`${OPERATORS}?notice=role-changed`)
    expect((await cy.get(OPERATORS)).statusCode).toBe(200)
    const removed = await cy.post(`${OPERATORS}/${await idOf('bo@ops.example')}/remove`)
    expect(removed.headers.location).toBe(`${OPERATORS}?notice=operator-removed`)
    expect(await audit('operator.remove')).toEqual(['account:cy@ops.example'])
    expect(await audit('operator.role')).toEqual(['account:ops@example.org'])
    // Bo's session ended with the removal: its next page asks to sign in.
    const after = await bo.get('/dashboard/operator/applications')
    expect(after.statusCode).toBe(303)
    expect(after.headers.location).toMatch(/^\/dashboard\/login/)
    const gone = await storage.db.selectFrom('accounts').select('id').where('email', '=', 'bo@ops.example').execute()
    expect(gone).toEqual([])
    // An admin may step down while another admin is left, and then no longer reaches the page.
    const down = await cy.post(`${OPERATORS}/${await idOf('cy@ops.example')}/role`, { role: 'operator' })
    expect(down.headers.location).toBe('/dashboard/operator/applications?notice=role-changed')
    expect((await cy.get(OPERATORS)).statusCode).toBe(403)
  })
})
