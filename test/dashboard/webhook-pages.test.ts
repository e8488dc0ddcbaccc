/** A partner registers a webhook endpoint in the dashboard, sees its secret once, tests it and reads its log. */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { endpointUrlHint } from '../../src/dashboard/pages/partner/webhooks/views.js'
import { utcMinute } from '../../src/dashboard/times.js'
import { RETRY_DELAYS_MS } from '../../src/domain/webhook-events.js'
import { endAgreements } from '../../src/cases/agreement-end.js'
import { listDisclosures } from '../../src/storage/disclosure-log.js'
import { enrollStudent } from '../../src/cases/enroll.js'
import { buildTestApp, STUDENTS, type TestContext } from '../helper.js'
import { perSuite } from '../support/built.js'
import { refusingUrl } from '../support/webhook-receiver.js'
import { DashboardClient, makeOwner } from './dashboard-client.js'

describe('the webhook pages', () => {
  let t: TestContext
  let alice: DashboardClient
  let bob: DashboardClient
  let receiver: http.Server
  let base: string
  const received: { headers: http.IncomingHttpHeaders; body: string }[] = []

  beforeAll(async () => {
    t = await buildTestApp({ env: { WEBHOOK_ALLOW_LOOPBACK: 'true', MAX_WEBHOOK_ENDPOINTS_PER_ORGANISATION: '3' } })
    alice = new DashboardClient(t.app, '192.0.2.10')
    bob = new DashboardClient(t.app, '192.0.2.11')
    expect((await alice.signUp('alice@partner.example')).statusCode).toBe(200)
    expect((await bob.signUp('bob@partner.example')).statusCode).toBe(200)
    receiver = http.createServer((req, res) => {
      let body = ''
      req.on('data', (chunk) => (body += chunk))
      req.on('end', () => {
        received.push({ headers: req.headers, body })
        res.end('ok')
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
    base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    receiver.closeAllConnections()
    receiver.close()
    await t.close()
  })

  it('say in the URL field that this deployment also accepts endpoints on this machine', async () => {
    const form = (await alice.get('/dashboard/partner/webhooks')).body
    expect(form).toContain(`id="url-hint">${endpointUrlHint(true)}</p>`)
    expect(endpointUrlHint(true)).toContain('http:// or https:// to localhost, 127.0.0.1 or [::1]')
    expect(form).toContain('<a href="/docs/webhooks">')
  })

  it('refuse an internal or non-https URL and an empty event list, keeping what was typed', async () => {
    for (const url of ['http://10.0.0.8/hook', 'https://169.254.169.254/x', 'ftp://example.com/x']) {
      const res = await alice.post('/dashboard/partner/webhooks', { url, mode: 'test', events: ['catalog.published'] })
      expect(res.statusCode, url).toBe(400)
      expect(res.body).toContain(url)
    }
    const none = await alice.post('/dashboard/partner/webhooks', { url: `${base}/hook`, mode: 'test' })
    expect(none.statusCode).toBe(400)
    expect(none.body).toContain('Choose at least one event')
    // Live endpoints need an approved organisation.
    const live = await alice.post('/dashboard/partner/webhooks', {
      url: `${base}/hook`,
      mode: 'live',
      events: ['catalog.published'],
    })
    expect(live.statusCode).toBe(400)
  })

  it('show the secret once, send a signed test event, resend it, roll the secret, and keep other partners out', async () => {
    const created = await alice.post('/dashboard/partner/webhooks', {
      url: `${base}/hook`,
      mode: 'test',
      events: ['student.tier_changed', 'catalog.published'],
    })
    expect(created.statusCode).toBe(200)
    const secret = /whsec_[A-Za-z0-9+/=]+/.exec(created.body)?.[0]
    expect(secret).toBeDefined()
    const page = /href="(\/dashboard\/partner\/webhooks\/[0-9a-f-]{36})"/.exec(created.body)![1]!
    const list = await alice.get('/dashboard/partner/webhooks')
    expect(list.body).toContain(`${base}/hook`)
    expect(list.body).not.toContain(secret!)
    expect((await alice.get(page)).body).not.toContain(secret!)

    expect((await alice.post(`${page}/test`)).statusCode).toBe(303)
    expect(await t.app.services.webhooks.run()).toBe(1)
    const [first] = received
    const headers = {
      'webhook-id': String(first!.headers['webhook-id']),
      'webhook-timestamp': String(first!.headers['webhook-timestamp']),
      'webhook-signature': String(first!.headers['webhook-signature']),
    }
    // The test clock is not the real one; the reference verifier checks signatures apart from freshness.
    expect(() => new Webhook(secret!).verify(first!.body, headers)).toThrow(/timestamp/)
    expect(first!.headers['webhook-signature']).toBe(
      (await import('../../src/domain/webhook-signature.js')).signWebhook(
        secret!,
        headers['webhook-id'],
        Number(headers['webhook-timestamp']),
        first!.body,
      ),
    )
    expect(JSON.parse(first!.body)).toMatchObject({ type: 'webhook.test' })
    const log = await alice.get(page)
    expect(log.body).toContain(headers['webhook-id'])
    expect(log.body).toContain('200')

    expect((await alice.post(`${page}/deliveries/${headers['webhook-id']}/resend`)).statusCode).toBe(303)
    expect(await t.app.services.webhooks.run()).toBe(1)
    expect(received[1]!.headers['webhook-id']).toBe(headers['webhook-id'])

    const rolled = await alice.post(`${page}/roll`)
    const newSecret = /whsec_[A-Za-z0-9+/=]+/.exec(rolled.body)?.[0]
    expect(newSecret).toBeDefined()
    expect(newSecret).not.toBe(secret)

    for (const path of [page, `${page}/test`, `${page}/roll`, `${page}/disable`]) {
      const res = path === page ? await bob.get(path) : await bob.post(path)
      expect(res.statusCode, path).toBe(404)
    }
    expect((await alice.post(`${page}/disable`)).statusCode).toBe(303)
    expect((await alice.get(page)).body).toContain('Enable')
  })

  it('refuse to resend a student event once the agreement has ended, saying why, and send nothing', async () => {
    const carol = new DashboardClient(t.app, '192.0.2.12')
    expect((await carol.signUp('carol@partner.example')).statusCode).toBe(200)
    // Carol's organisation: Acme from the fixtures (agreement in force; Ada linked).
    await makeOwner(t.storage.db, 'carol@partner.example', t.fixtures.orgs.acme)
    const created = await carol.post('/dashboard/partner/webhooks', {
      url: `${base}/live`,
      mode: 'live',
      events: ['student.tier_changed'],
    })
    expect(created.statusCode).toBe(200)
    const page = /href="(\/dashboard\/partner\/webhooks\/[0-9a-f-]{36})"/.exec(created.body)![1]!
    const access = {
      at: t.clock.now(),
      requestId: 'req-carol',
      keyId: t.fixtures.keyIds.write,
      organisationId: t.fixtures.orgs.acme,
      sandbox: false,
    }
    expect((await enrollStudent(t.storage.writes, STUDENTS.ada, 'innovator', access, t.clock.now()))?.changed).toBe(
      true,
    )
    expect(await t.app.services.webhooks.run()).toBe(1)
    const sent = received.length
    const id = String(received.at(-1)!.headers['webhook-id'])

    await endAgreements(t.storage.db, { organisationId: t.fixtures.orgs.acme }, t.clock.now())
    const refused = await carol.post(`${page}/deliveries/${id}/resend`)
    expect(refused.statusCode).toBe(403)
    expect(refused.body).toContain('Not sent: access ended')
    expect(refused.body).toContain('no data-sharing agreement is in force')
    expect(await t.app.services.webhooks.run()).toBe(0)
    expect(received).toHaveLength(sent)
    const rows = await listDisclosures(t.storage.db, { studentId: STUDENTS.ada, action: 'webhook' })
    expect(rows.filter((row) => row.request_id === id).map((row) => row.outcome)).toEqual([
      'denied_agreement',
      'disclosed',
    ])
    // A change now is not sent either; the log says so, and why.
    access.requestId = 'req-carol-2'
    expect((await enrollStudent(t.storage.writes, STUDENTS.ada, 'builder', access, t.clock.now()))?.changed).toBe(true)
    const log = (await carol.get(page)).body
    expect(log).toContain('<span class="state not-sent">not sent: access ended</span>')
    expect(log).toContain('no data-sharing agreement is in force')
  })

  it('show each delivery as delivered, queued, retrying (with the next attempt) or failed', async () => {
    const frank = new DashboardClient(t.app, '192.0.2.14')
    expect((await frank.signUp('frank@partner.example')).statusCode).toBe(200)
    const pageOf = async (url: string) => {
      const created = await frank.post('/dashboard/partner/webhooks', {
        url,
        mode: 'test',
        events: ['catalog.published'],
      })
      return /href="(\/dashboard\/partner\/webhooks\/[0-9a-f-]{36})"/.exec(created.body)![1]!
    }
    const answering = await pageOf(`${base}/frank`)
    const refusing = await pageOf(await refusingUrl())
    const states = async (page: string) =>
      [
        ...(await frank.get(page)).body.matchAll(
          /<span class="state (?:queued|retrying|delivered|failed|not-sent)">[^<]*<\/span>[^<]*/g,
        ),
      ].map((m) => m[0].replace(/<[^>]+>/g, ''))
    await frank.post(`${answering}/test`)
    await frank.post(`${refusing}/test`)
    expect(await states(refusing)).toEqual(['queued'])
    await t.app.services.webhooks.run()
    expect(await states(answering)).toEqual(['delivered'])
    const next = utcMinute(new Date(t.clock.now() + RETRY_DELAYS_MS[0]).toISOString())
    expect(await states(refusing)).toEqual([`retrying (next attempt at ${next})`])
    for (const delay of RETRY_DELAYS_MS) {
      t.clock.advance(delay)
      await t.app.services.webhooks.run()
    }
    // The schedule outlasts a session.
    expect((await frank.signIn('frank@partner.example')).statusCode).toBe(303)
    expect(await states(refusing)).toEqual(['failed'])
  })

  it('refuse an endpoint past the configured cap (409), and an 11th test event or resend in a minute (429, saying when)', async () => {
    const dave = new DashboardClient(t.app, '192.0.2.13')
    expect((await dave.signUp('dave@partner.example')).statusCode).toBe(200)
    const add = (n: number) =>
      dave.post('/dashboard/partner/webhooks', {
        url: `${base}/dave-${n}`,
        mode: 'test',
        events: ['catalog.published'],
      })
    const pages: string[] = []
    for (let n = 0; n < 3; n++) {
      const created = await add(n)
      expect(created.statusCode).toBe(200)
      pages.push(/href="(\/dashboard\/partner\/webhooks\/[0-9a-f-]{36})"/.exec(created.body)![1]!)
    }
    const fourth = await add(3)
    expect(fourth.statusCode).toBe(409)
    expect(fourth.body).toContain('Endpoint limit reached: your organisation already has 3 enabled endpoints')
    expect(fourth.body).toContain(`${base}/dave-3`)
    // A disabled endpoint leaves room; enabling it again past the cap is refused the same way.
    expect((await dave.post(`${pages[2]}/disable`)).statusCode).toBe(303)
    expect((await add(3)).statusCode).toBe(200)
    const enable = await dave.post(`${pages[2]}/enable`)
    expect(enable.statusCode).toBe(409)
    expect(enable.body).toContain('Endpoint limit reached')

    const page = pages[0]!
    for (let i = 0; i < 10; i++) expect((await dave.post(`${page}/test`)).statusCode).toBe(303)
    const limited = await dave.post(`${page}/test`)
    expect(limited.statusCode).toBe(429)
    expect(limited.headers['retry-after']).toBe('60')
    expect(limited.body).toContain('10 test events and resends in the last minute')
    expect(limited.body).toContain('Try again in 60 seconds')
    // Another endpoint has its own share.
    expect((await dave.post(`${pages[1]}/test`)).statusCode).toBe(303)
    t.clock.advance(15_000)
    const id = /<code>(msg_[\w-]+)<\/code>/.exec((await dave.get(page)).body)![1]!
    const resend = await dave.post(`${page}/deliveries/${id}/resend`)
    expect(resend.statusCode).toBe(429)
    expect(resend.headers['retry-after']).toBe('45')
    t.clock.advance(45_000)
    expect((await dave.post(`${page}/deliveries/${id}/resend`)).statusCode).toBe(303)
  })
})

describe('the webhook form of a deployment without WEBHOOK_ALLOW_LOOPBACK', () => {
  const t = perSuite(() => buildTestApp())

  it('says https:// and a public host, and refuses an endpoint on this machine', async () => {
    const carol = new DashboardClient(t.app, '192.0.2.12')
    expect((await carol.signUp('carol@partner.example')).statusCode).toBe(200)
    const form = (await carol.get('/dashboard/partner/webhooks')).body
    expect(form).toContain(`id="url-hint">${endpointUrlHint(false)}</p>`)
    expect(endpointUrlHint(false)).toMatch(/^https:\/\/ and a public host/)
    expect(endpointUrlHint(false)).not.toMatch(/localhost|http:\/\/ /)
    for (const url of ['http://localhost:4000/', 'https://127.0.0.1:4000/']) {
      const refused = await carol.post('/dashboard/partner/webhooks', {
        url,
        mode: 'test',
        events: ['catalog.published'],
      })
      expect(refused.statusCode, url).toBe(400)
    }
  })
})
