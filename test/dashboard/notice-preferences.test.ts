/**
 * The Account page's Notices section: a partner sees its four optional notices ticked, saves a
 * choice with the page's CSRF token (refused without it), and finds no box for the security
 * notices; a sign-in from a second browser is told to the account, the first one not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ManualClock } from '../../src/clock.js'
import type { Storage } from '../../src/storage/connection.js'
import { createTestStorage, type ListeningApp, listeningApp, START, testConfig } from '../helper.js'
import type { HttpRequest } from '../support/http-client.js'
import { DashboardClient } from './dashboard-client.js'

const EMAIL = 'owner@notices.test'

describe('the notice preferences', () => {
  const clock = new ManualClock(START)
  let storage: Storage
  let listening: ListeningApp
  const socket = (request: HttpRequest) => listening.client.request(request)

  beforeAll(async () => {
    storage = await createTestStorage({ catalog: false })
    listening = await listeningApp({ config: testConfig(), storage, clock, logger: false, pollChanges: false })
  })
  afterAll(async () => {
    await listening?.close()
    await storage?.close()
  })

  const optOuts = async () =>
    (await storage.db.selectFrom('notice_opt_outs').select('topic').orderBy('topic').execute()).map((r) => r.topic)

  it('shows every optional notice on, saves a choice, refuses a form without its token', async () => {
    const client = new DashboardClient(listening.app, '198.51.100.7', socket)
    await client.signUp(EMAIL)
    const page = await client.get('/dashboard/account')
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain('<h2 id="notices">Notices</h2>')
    expect(page.body.match(/name="topics" value="[a-z]+" checked/g)).toHaveLength(4)
    expect(page.body).not.toMatch(/name="topics" value="(new-device|second-factor)/)
    expect(page.body).toContain('Security notices are always sent')

    const forged = await client.post('/dashboard/account/notices', { _csrf: 'forged', topics: ['keys'] })
    expect(forged.statusCode).toBe(403)
    expect(await optOuts()).toEqual([])

    const saved = await client.post('/dashboard/account/notices', { topics: ['keys', 'deletion', 'new-device'] })
    expect(saved.statusCode).toBe(303)
    expect(saved.headers.location).toBe('/dashboard/account?notice=notices-saved#notices')
    expect(await optOuts()).toEqual(['agreements', 'webhooks'])
    const after = await client.get('/dashboard/account')
    expect(after.body).toContain('name="topics" value="keys" checked')
    expect(after.body).toMatch(/name="topics" value="webhooks">/)
  })

  it('tells the account of a sign-in from another browser, not of one from a known one', async () => {
    const newDevice = () =>
      storage.db.selectFrom('mail_outbox').select('recipient').where('kind', '=', 'new-device').execute()
    expect(await newDevice()).toEqual([])
    const other = new DashboardClient(listening.app, '198.51.100.8', socket)
    expect((await other.signIn(EMAIL)).statusCode).toBeLessThan(400)
    expect(await newDevice()).toEqual([{ recipient: EMAIL }])
    await other.post('/dashboard/logout')
    await other.signIn(EMAIL)
    expect(await newDevice()).toHaveLength(1)
  })
})
