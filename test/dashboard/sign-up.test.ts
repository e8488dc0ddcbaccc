/**
 * Sign-up over HTTP: it answers the same whether or not the address has an account, it is
 * limited per address, and any valid address works, however long (RFC 5321 allows 254
 * characters). The sandbox and its first test key come with the first sign-in.
 */
import type { LightMyRequestResponse } from 'fastify'
import { describe, expect, it } from 'vitest'
import { sandboxName } from '../../src/cases/sandbox.js'
import { buildTestApp } from '../helper.js'
import { DashboardClient } from './dashboard-client.js'
import { perSuite } from '../support/built.js'

/** A syntactically valid address of exactly `length` characters. */
function addressOf(length: number, seed: string): string {
  const domain = `${seed}.example.org`
  const local = 'x'.repeat(Math.min(64, length - domain.length - 1))
  let host = domain
  while (local.length + 1 + host.length < length)
    host = `${'d'.repeat(Math.min(63, length - local.length - 1 - host.length - 1))}.${host}`
  return `${local}@${host}`
}

/** What an outsider sees of a response: everything but the random cookie values. */
function visible(res: LightMyRequestResponse) {
  const cookies = ([] as string[]).concat((res.headers['set-cookie'] as string | string[] | undefined) ?? [])
  return {
    status: res.statusCode,
    location: res.headers.location,
    contentType: res.headers['content-type'],
    body: res.body,
    cookies: cookies.map((cookie) => cookie.replace(/=[^;]*/, '=…')),
  }
}

describe('dashboard sign-up', () => {
  const t = perSuite(() => buildTestApp())

  it('answers the same for an address with an account as for a new one', async () => {
    expect((await new DashboardClient(t.app, '192.0.2.20').signUp('taken@partner.example')).statusCode).toBe(200)
    const existing = await new DashboardClient(t.app, '192.0.2.21').post('/dashboard/signup', {
      email: 'taken@partner.example',
      password: 'another long passphrase',
    })
    const fresh = await new DashboardClient(t.app, '192.0.2.22').post('/dashboard/signup', {
      email: 'fresh@partner.example',
      password: 'another long passphrase',
    })
    expect(visible(existing)).toEqual(visible(fresh))
    expect(existing.statusCode).toBe(303)
    expect(existing.headers.location).toBe('/dashboard/login?notice=signed-up')
    // The page it leads to says the same to both.
    const notice = await new DashboardClient(t.app, '192.0.2.22').get(existing.headers.location!)
    expect(notice.body).toContain('If this address is new, your partner account is ready')
    // Nothing of the existing account changed: its own password still works, the other does not.
    expect(
      (await new DashboardClient(t.app, '192.0.2.23').signIn('taken@partner.example', 'another long passphrase'))
        .statusCode,
    ).toBe(401)
    expect((await new DashboardClient(t.app, '192.0.2.23').signIn('taken@partner.example')).statusCode).toBe(303)
  })

  it('gives a new partner the sandbox and its first test key at the first sign-in, once', async () => {
    const client = new DashboardClient(t.app, '192.0.2.24')
    expect(
      (
        await client.post('/dashboard/signup', {
          email: 'new@partner.example',
          password: 'a long and memorable phrase',
        })
      ).statusCode,
    ).toBe(303)
    const signIn = await client.signIn('new@partner.example')
    expect(signIn.statusCode).toBe(303)
    expect(signIn.headers.location).toMatch(/^\/dashboard\/partner\/keys\/shown\/[\w-]{43}$/)
    const welcome = await client.follow(signIn)
    expect(welcome.statusCode).toBe(200)
    expect(welcome.body).toContain('<h1>Welcome</h1>')
    expect(welcome.body).toMatch(/cur_test_[\w-]+/)
    const account = await t.storage.db
      .selectFrom('accounts')
      .select('sandbox_organisation_id')
      .where('email', '=', 'new@partner.example')
      .executeTakeFirstOrThrow()
    expect(account.sandbox_organisation_id).not.toBeNull()
    const again = await new DashboardClient(t.app, '192.0.2.25').signIn('new@partner.example')
    expect(again.statusCode).toBe(303)
    expect(again.headers.location).toBe('/dashboard/partner')
  })

  it('limits sign-ups per address, counting new and existing addresses alike', async () => {
    const client = new DashboardClient(t.app, '203.0.113.30')
    const token = await client.csrf()
    const signUp = (email: string) =>
      client.post('/dashboard/signup', { _csrf: token, email, password: 'a long and memorable phrase' })
    for (const email of [
      'one@bulk.example',
      'taken@partner.example',
      'two@bulk.example',
      'taken@partner.example',
      'three@bulk.example',
    ]) {
      expect((await signUp(email)).statusCode, email).toBe(303)
    }
    const refused = await signUp('four@bulk.example')
    expect(refused.statusCode).toBe(429)
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)
    expect(
      await t.storage.db
        .selectFrom('accounts')
        .select('id')
        .where('email', '=', 'four@bulk.example')
        .executeTakeFirst(),
    ).toBeUndefined()
    // Another address is not affected, and the window moves on.
    expect((await new DashboardClient(t.app, '203.0.113.31').signUp('four@bulk.example')).statusCode).toBe(200)
    t.clock.advance(Number(refused.headers['retry-after']) * 1000)
    expect((await signUp('five@bulk.example')).statusCode).toBe(303)
  })

  it('refuses a common password, however it is spelt, with a message next to the field, and creates no account', async () => {
    const client = new DashboardClient(t.app, '192.0.2.60')
    for (const password of ['qwerty123456', 'Password 1234', 'PASSWORDPASSWORD']) {
      const res = await client.post('/dashboard/signup', { email: 'common@partner.example', password })
      expect(res.statusCode, password).toBe(400)
      expect(res.body).toContain('This is one of the most common passwords, which attackers try first.')
      expect(res.body).toContain('aria-invalid="true"')
      expect(res.body).toContain('value="common@partner.example"')
    }
    expect(
      await t.storage.db.selectFrom('accounts').select('id').where('email', '=', 'common@partner.example').execute(),
    ).toEqual([])
  })

  for (const length of [130, 254]) {
    it(`signs up a valid ${length}-character e-mail address and names its sandbox within 120 characters`, async () => {
      const email = addressOf(length, `long${length}`)
      expect(email).toHaveLength(length)
      const client = new DashboardClient(t.app, `192.0.2.${length % 250}`)
      const res = await client.signUp(email)
      expect(res.statusCode, res.body.slice(0, 2000)).toBe(200)
      const account = await t.storage.db
        .selectFrom('accounts')
        .select('sandbox_organisation_id')
        .where('email', '=', email)
        .executeTakeFirstOrThrow()
      const sandbox = await t.storage.db
        .selectFrom('organisations')
        .select('name')
        .where('id', '=', account.sandbox_organisation_id!)
        .executeTakeFirstOrThrow()
      expect(sandbox.name.length).toBeLessThanOrEqual(120)
      expect(sandbox.name.startsWith(`Sandbox: ${email.slice(0, 60)}`)).toBe(true)
    })
  }

  it('keeps the plain name for short addresses and tells long ones apart by a digest', () => {
    expect(sandboxName('dev@acme.example')).toBe('Sandbox: dev@acme.example')
    const a = `${'x'.repeat(64)}@${'d'.repeat(63)}.a.example.org`
    const b = `${'x'.repeat(64)}@${'d'.repeat(63)}.b.example.org`
    expect(sandboxName(a)).not.toBe(sandboxName(b))
    expect(sandboxName(a)).toHaveLength(120)
  })
})
