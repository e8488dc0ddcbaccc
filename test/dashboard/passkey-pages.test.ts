/**
 * Passkeys over a real socket, answered by a software authenticator as the dashboard's script
 * would send them: added on the Account page (JSON with the page's CSRF token), then signing in
 * without a password, or standing for the second step of a password sign-in; removed by a plain
 * form. A form sent without the script is told passkeys need JavaScript.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ManualClock } from '../../src/clock.js'
import { relyingParty } from '../../src/cases/passkeys.js'
import type { Storage } from '../../src/storage/connection.js'
import { createTestStorage, type ListeningApp, listeningApp, START, testConfig } from '../helper.js'
import type { HttpRequest } from '../support/http-client.js'
import { SoftwarePasskey } from '../support/software-passkey.js'
import { DashboardClient } from './dashboard-client.js'

const PUBLIC_URL = 'https://curriculum.example.org'
const RP = relyingParty(PUBLIC_URL)

describe('passkeys in the dashboard', () => {
  const clock = new ManualClock(START)
  let storage: Storage
  let listening: ListeningApp
  let socket: (request: HttpRequest) => ReturnType<ListeningApp['client']['request']>
  const key = new SoftwarePasskey({ origin: RP.origin, rpId: RP.id })
  const client = (ip: string) => new DashboardClient(listening.app, ip, socket)

  beforeAll(async () => {
    storage = await createTestStorage()
    listening = await listeningApp({ config: testConfig({ PUBLIC_URL }), storage, clock, pollChanges: false })
    socket = (request) => listening.client.request(request)
  })
  afterAll(async () => {
    await listening?.close()
    await storage?.close()
  })

  it('adds a passkey on the Account page, which then signs in without a password', async () => {
    const dana = client('192.0.2.80')
    await dana.signUp('dana@acme.example')
    const page = await dana.get('/dashboard/account')
    expect(page.body).toContain('No passkey yet.')
    expect(page.body).toContain('data-passkey="register"')
    const options = await dana.postJson('/dashboard/account/passkeys/options', {})
    expect(options.statusCode).toBe(200)
    const { challenge, rp, user } = options.json() as { challenge: string; rp: { id: string }; user: { name: string } }
    expect(rp.id).toBe('curriculum.example.org')
    expect(user.name).toBe('dana@acme.example')
    const added = await dana.postJson('/dashboard/account/passkeys', {
      passkeyName: 'work laptop',
      response: key.register({ challenge }),
    })
    expect(added.statusCode).toBe(200)
    expect(added.json()).toEqual({ redirect: '/dashboard/account?notice=passkey-added#passkeys' })
    expect((await dana.get('/dashboard/account')).body).toContain('work laptop')

    const elsewhere = client('192.0.2.81')
    const signIn = await elsewhere.get('/dashboard/login')
    expect(signIn.body).toContain('Sign in with a passkey')
    const open = (await elsewhere.postJson('/dashboard/login/passkey/options', {})).json() as { challenge: string }
    const done = await elsewhere.postJson('/dashboard/login/passkey', { response: key.authenticate(open) })
    expect(done.json()).toEqual({ redirect: '/dashboard/partner' })
    expect((await elsewhere.get('/dashboard/partner')).statusCode).toBe(200)
    // The same answer again is refused, and signs nobody in.
    const replay = client('192.0.2.82')
    const again = await replay.postJson('/dashboard/login/passkey', { response: key.authenticate(open) })
    expect(again.statusCode).toBe(409)
    expect(again.json()).toEqual({ message: 'This answer was used already: sign in again.' })
    expect((await replay.get('/dashboard/partner')).statusCode).toBe(303)
  })

  it('asks the passkey for the second step after the password, and takes no other account’s', async () => {
    const dana = client('192.0.2.83')
    const answer = await dana.post('/dashboard/login', {
      email: 'dana@acme.example',
      password: 'a long and memorable phrase',
    })
    expect(answer.headers.location).toBe('/dashboard/sign-in/code')
    const code = await dana.get('/dashboard/sign-in/code')
    expect(code.body).toContain('Use a passkey instead')
    const options = (await dana.postJson('/dashboard/sign-in/code/passkey/options', {})).json() as {
      challenge: string
      allowCredentials: { id: string }[]
    }
    expect(options.allowCredentials.map((c) => c.id)).toEqual([key.id.toString('base64url')])
    const stranger = new SoftwarePasskey({ origin: RP.origin, rpId: RP.id })
    const refused = await dana.postJson('/dashboard/sign-in/code/passkey', { response: stranger.authenticate(options) })
    expect(refused.statusCode).toBe(400)
    const done = await dana.postJson('/dashboard/sign-in/code/passkey', { response: key.authenticate(options) })
    expect(done.json()).toEqual({ redirect: '/dashboard/partner' })
    expect((await dana.get('/dashboard/partner')).statusCode).toBe(200)
  })

  it('says a passkey needs JavaScript to a plain form, refuses JSON without the CSRF token, and removes one', async () => {
    const dana = client('192.0.2.84')
    await dana.signIn('dana@acme.example')
    const done = await dana.postJson('/dashboard/sign-in/code/passkey', {
      response: key.authenticate(
        (await dana.postJson('/dashboard/sign-in/code/passkey/options', {})).json() as { challenge: string },
      ),
    })
    expect(done.statusCode).toBe(200)
    const plain = await dana.post('/dashboard/account/passkeys', { passkeyName: 'x' })
    expect(plain.statusCode).toBe(400)
    expect(plain.body).toContain('Passkeys need JavaScript')
    const forged = await listening.client.request({
      method: 'POST',
      url: '/dashboard/account/passkeys/options',
      headers: {
        cookie: [...dana.cookies].map(([n, v]) => `${n}=${v}`).join('; '),
        'content-type': 'application/json',
      },
      payload: '{}',
    })
    expect(forged.statusCode).toBe(403)
    const removed = await dana.post(`/dashboard/account/passkeys/${key.id.toString('base64url')}/remove`)
    expect(removed.headers.location).toBe('/dashboard/account?notice=passkey-removed#passkeys')
    expect((await dana.get('/dashboard/account')).body).toContain('No passkey yet.')
    const audit = await storage.db
      .selectFrom('audit_log')
      .select('action')
      .where('action', 'like', '%passkey%')
      .execute()
    expect(audit.map((row) => row.action).sort()).toEqual([
      'second_factor.passkey_added',
      'second_factor.passkey_removed',
    ])
  })
})
