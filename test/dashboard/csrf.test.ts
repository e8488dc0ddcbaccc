/**
 * CSRF: the attack that worked, reproduced. A page on another port of the same host planted its
 * own `cur_csrf` cookie (with a narrower Path, so the browser sent it first) and a token it had
 * fetched for that cookie; a signed-in operator who opened the page suspended an organisation.
 * Now the token is bound to the session, and the sender's origin is checked.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { hashPassword } from '../../src/domain/passwords.js'
import { createAccount } from '../../src/storage/account-repository.js'
import { buildTestApp } from '../helper.js'
import { DashboardClient, signedInOperator } from './dashboard-client.js'
import { perSuite } from '../support/built.js'

describe('dashboard CSRF protection', () => {
  const t = perSuite(() => buildTestApp())
  let operator: DashboardClient
  let attacker: DashboardClient
  let suspend: string
  // inject() sends `Host: localhost:80`, so this is the dashboard's own origin.
  const SELF = 'http://localhost:80'

  beforeAll(async () => {
    operator = await signedInOperator(t, '192.0.2.4')
    attacker = new DashboardClient(t.app, '203.0.113.66')
    suspend = `/dashboard/operator/organisations/${t.fixtures.orgs.acme}/suspend`
  })

  async function status(): Promise<string> {
    return (
      await t.storage.db
        .selectFrom('organisations')
        .select('status')
        .where('id', '=', t.fixtures.orgs.acme)
        .executeTakeFirstOrThrow()
    ).status
  }

  /** The operator's cookies with the attacker's `cur_csrf` first, as a narrower-Path cookie is sent. */
  async function planted(): Promise<{ cookie: string; token: string }> {
    const token = await attacker.csrf()
    const cookie = [
      `cur_csrf=${attacker.cookies.get('cur_csrf')!}`,
      ...[...operator.cookies].map(([name, value]) => `${name}=${value}`),
    ].join('; ')
    return { cookie, token }
  }

  it('refuses a token issued to another session even when its cookie is planted', async () => {
    const { cookie, token } = await planted()
    const res = await operator.post(suspend, { _csrf: token }, { cookie })
    expect(res.statusCode).toBe(403)
    expect(res.body).toContain('This form has expired')
    expect(await status()).toBe('active')
  })

  it('refuses the attack as a browser sends it: from another port of the same host', async () => {
    const { cookie, token } = await planted()
    const res = await operator.post(
      suspend,
      { _csrf: token },
      { cookie, origin: 'http://localhost:8080', 'sec-fetch-site': 'same-site' },
    )
    expect(res.statusCode).toBe(403)
    expect(await status()).toBe('active')
  })

  it('refuses a cross-site sender even with the operator’s own valid token', async () => {
    const token = await operator.csrf()
    const senders: Record<string, string>[] = [
      { origin: 'https://evil.example' },
      { origin: 'null' },
      { origin: 'http://localhost:8080' },
      { origin: 'https://localhost:80' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
      { 'sec-fetch-site': 'same-site', origin: SELF },
    ]
    for (const headers of senders) {
      const res = await operator.post(suspend, { _csrf: token }, headers)
      expect(res.statusCode, JSON.stringify(headers)).toBe(403)
      expect(res.body).toContain('Sent from another site')
    }
    expect(await status()).toBe('active')
  })

  it('refuses a missing, empty or forged token', async () => {
    for (const token of [null, '', 'forged', `${await operator.csrf()}x`]) {
      const res = await operator.post(suspend, { _csrf: token }, { origin: SELF, 'sec-fetch-site': 'same-origin' })
      expect(res.statusCode, String(token)).toBe(403)
    }
    expect(await status()).toBe('active')
  })

  it('accepts the operator’s own form, with or without the browser’s origin headers', async () => {
    const withHeaders = await operator.post(suspend, {}, { origin: SELF, 'sec-fetch-site': 'same-origin' })
    expect(withHeaders.statusCode).toBe(303)
    expect(await status()).toBe('suspended')
    const reinstate = await operator.post(`/dashboard/operator/organisations/${t.fixtures.orgs.acme}/reinstate`)
    expect(reinstate.statusCode).toBe(303)
    expect(await status()).toBe('active')
  })

  it('uses __Host- cookies with Path=/ over TLS, and binds their token to the session there too', async () => {
    const tls = await buildTestApp({ env: { TRUST_PROXY: 'true' } })
    try {
      await createAccount(
        tls.storage.db,
        { email: 'ops@example.org', passwordHash: await hashPassword('operator password 2026'), role: 'operator' },
        tls.clock.now(),
      )
      const headers = { 'x-forwarded-proto': 'https', host: 'dashboard.example' }
      const page = await tls.app.inject({ method: 'GET', url: '/dashboard/login', headers })
      const visitor = String(page.headers['set-cookie'])
      expect(visitor).toMatch(/^__Host-cur_csrf=[\w-]+; Path=\/; HttpOnly; SameSite=Lax; Secure$/)
      const token = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!
      const cookie = visitor.split(';')[0]!
      const signIn = await tls.app.inject({
        method: 'POST',
        url: '/dashboard/login',
        headers: {
          ...headers,
          cookie,
          origin: 'https://dashboard.example',
          'content-type': 'application/x-www-form-urlencoded',
        },
        payload: new URLSearchParams({
          _csrf: token,
          email: 'ops@example.org',
          password: 'operator password 2026',
        }).toString(),
      })
      expect(signIn.statusCode).toBe(303)
      const session = ([] as string[])
        .concat(signIn.headers['set-cookie'] as string | string[])
        .find((c) => c.startsWith('__Host-cur_session='))!
      expect(session).toMatch(/; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+; Secure$/)
      // The plain names are not read over TLS: a cookie without the prefix could come from anywhere.
      const plain = await tls.app.inject({
        method: 'GET',
        url: '/dashboard/account',
        headers: { ...headers, cookie: session.split(';')[0]!.replace('__Host-', '') },
      })
      expect(plain.statusCode).toBe(303)
      const signedIn = await tls.app.inject({
        method: 'GET',
        // The Account page: an operator without a second factor reaches it (two-step-gate.ts).
        url: '/dashboard/account',
        headers: { ...headers, cookie: session.split(';')[0]! },
      })
      expect(signedIn.statusCode).toBe(200)
    } finally {
      await tls.close()
    }
  })
})
