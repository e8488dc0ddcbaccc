/**
 * The operator's Outbox page over a real socket: without SMTP_URL a test message stays in the
 * outbox, readable there, and the log names it in one line with its link (never its recipient or
 * body); with SMTP_URL the worker sends it to a real SMTP server. The forms take a CSRF token and
 * an operator; bad input gets its field error; "Send again" is audited; pages go newest first.
 */
import { Writable } from 'node:stream'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { claimMail, queueMail } from '../../src/cases/mail.js'
import { ManualClock } from '../../src/clock.js'
import type { Storage } from '../../src/storage/connection.js'
import { findMail } from '../../src/storage/mail-outbox-repository.js'
import { createTestStorage, type ListeningApp, listeningApp, START, testConfig } from '../helper.js'
import type { HttpRequest } from '../support/http-client.js'
import { SmtpTestServer } from '../support/smtp-test-server.js'
import { DashboardClient, mailedLink, signedInOperator } from './dashboard-client.js'

const OUTBOX = '/dashboard/operator/outbox'

describe('the Outbox page, SMTP_URL unset', () => {
  const clock = new ManualClock(START)
  let storage: Storage
  let listening: ListeningApp
  let operator: DashboardClient
  let partner: DashboardClient
  const logged: string[] = []

  beforeAll(async () => {
    storage = await createTestStorage()
    const stream = new Writable({
      write(chunk, _encoding, done) {
        logged.push(String(chunk))
        done()
      },
    })
    listening = await listeningApp({
      config: testConfig({ PUBLIC_URL: 'https://curriculum.example.org' }),
      storage,
      clock,
      logger: pino({ level: 'info' }, stream),
      pollChanges: false,
    })
    const socket = (request: HttpRequest) => listening.client.request(request)
    operator = await signedInOperator({ app: listening.app, storage, clock }, '192.0.2.60', socket)
    partner = new DashboardClient(listening.app, '192.0.2.61', socket)
    expect((await partner.signUp('partner@outbox.example')).statusCode).toBe(200)
    // The sign-up's verification message is not what these tests are about: it starts the outbox empty.
    await mailedLink(storage.db, 'partner@outbox.example', 'verify-email')
    await storage.db.deleteFrom('mail_outbox').execute()
  })
  afterAll(async () => {
    await listening?.close()
    await storage?.close()
  })

  const audit = (action: string) =>
    storage.db.selectFrom('audit_log').selectAll().where('action', '=', action).orderBy('id').execute()
  const outbox = () => storage.db.selectFrom('mail_outbox').selectAll().orderBy('id').execute()

  it('says nothing is sent and shows the empty outbox', async () => {
    const page = await operator.get(OUTBOX)
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain('<code>SMTP_URL</code> is unset: nothing is sent')
    expect(page.body).toContain('No message yet.')
    expect(page.body).toContain('aria-current="page"')
  })

  it('refuses a missing, malformed or multiple address with its field error, queueing nothing', async () => {
    for (const to of [
      '',
      'nobody',
      'a@example.org, b@example.org',
      'Ops <ops@example.org>',
      'a@example.org\nBcc: x@y.org',
    ]) {
      const res = await operator.post(`${OUTBOX}/test`, { to })
      expect(res.statusCode, to).toBe(400)
      expect(res.body).toContain('Enter one e-mail address like name@example.org.')
      expect(res.body).toContain('aria-invalid="true"')
    }
    expect(await outbox()).toEqual([])
    expect(await audit('mail.test')).toEqual([])
  })

  it('refuses a form without its CSRF token, and a partner, changing nothing', async () => {
    expect((await operator.post(`${OUTBOX}/test`, { to: 'ops@example.org', _csrf: null })).statusCode).toBe(403)
    expect((await partner.post(`${OUTBOX}/test`, { to: 'ops@example.org' })).statusCode).toBe(403)
    expect((await partner.get(OUTBOX)).statusCode).toBe(403)
    expect(await outbox()).toEqual([])
  })

  it('queues a test message, audited, keeps it in the outbox to be read, and logs one line with its link', async () => {
    logged.length = 0
    const res = await operator.post(`${OUTBOX}/test`, { to: 'someone@example.net' })
    expect(res.statusCode).toBe(303)
    const [row] = await outbox()
    expect(res.headers.location).toBe(`${OUTBOX}?queued=${row!.id}`)
    expect(row).toMatchObject({ kind: 'test', recipient: 'someone@example.net', state: 'pending', attempts: 0 })
    const page = await operator.follow(res)
    expect(page.body).toContain(`Test message ${row!.id} was queued: it stays here, below.`)
    expect(page.body).toContain('In the outbox: 1 pending.')
    expect(page.body).toContain('<span class="state pending">pending</span>')
    expect(page.body).toContain('This is a test message from the Curriculum API at https://curriculum.example.org.')
    const [entry] = await audit('mail.test')
    expect(entry).toMatchObject({ actor: 'account:ops@example.org', target: `mail:${row!.id}` })
    expect(JSON.parse(entry!.detail)).toEqual({ to: 'someone@example.net' })
    const lines = logged.filter((line) => line.includes('mail kept in the outbox'))
    expect(lines).toHaveLength(1)
    const { msg } = JSON.parse(lines[0]!) as { msg: string }
    expect(msg).toBe(
      `mail kept in the outbox (SMTP_URL is unset): test message ${row!.id}, "Curriculum API test message", ` +
        "link: https://curriculum.example.org/dashboard/operator/outbox; read it on the dashboard's Outbox page",
    )
    expect(lines[0]).not.toContain('someone@example.net')
    expect(lines[0]).not.toContain('An operator sent it')
  })

  it('shows a message’s text escaped, as plain text', async () => {
    const id = await queueMail(
      storage.db,
      {
        kind: 'test',
        to: 'x@example.org',
        subject: '<i>Hi</i>',
        text: 'Use <b>this</b> & that',
        html: null,
        link: null,
      },
      clock.now(),
    )
    const page = await operator.get(OUTBOX)
    expect(page.body).toContain('<pre class="mail-body">Use &lt;b&gt;this&lt;/b&gt; &amp; that</pre>')
    expect(page.body).toContain('&lt;i&gt;Hi&lt;/i&gt;')
    expect(page.body).not.toContain('<b>this</b>')
    await storage.db.deleteFrom('mail_outbox').where('id', '=', id).execute()
  })

  it('sends an interrupted message again when asked, audited, and refuses one in another state', async () => {
    const [row] = await outbox()
    await claimMail(storage.db, clock.now(), 1000, 10)
    clock.advance(1000)
    expect((await claimMail(storage.db, clock.now(), 1000, 10)).interrupted).toEqual([row!.id])
    const page = await operator.get(OUTBOX)
    expect(page.body).toContain('<span class="state interrupted">interrupted</span>')
    expect(page.body).toContain(`action="${OUTBOX}/${row!.id}/send-again"`)
    const again = await operator.post(`${OUTBOX}/${row!.id}/send-again`)
    expect(again.statusCode).toBe(303)
    expect(again.headers.location).toBe(`${OUTBOX}?again=${row!.id}`)
    expect((await operator.follow(again)).body).toContain(`Message ${row!.id} was queued again`)
    expect(await findMail(storage.db, row!.id)).toMatchObject({ state: 'pending', attempts: 0 })
    const [entry] = await audit('mail.send_again')
    expect(entry).toMatchObject({ actor: 'account:ops@example.org', target: `mail:${row!.id}` })
    expect(JSON.parse(entry!.detail)).toMatchObject({ state: 'interrupted', attempts: 1, to: 'someone@example.net' })
    // Pending now: nothing to send again; no such message; not a message id.
    expect((await operator.post(`${OUTBOX}/${row!.id}/send-again`)).statusCode).toBe(409)
    expect((await operator.post(`${OUTBOX}/999999/send-again`)).statusCode).toBe(404)
    expect((await operator.post(`${OUTBOX}/abc/send-again`)).statusCode).toBe(404)
    expect((await partner.post(`${OUTBOX}/${row!.id}/send-again`)).statusCode).toBe(403)
    expect(await audit('mail.send_again')).toHaveLength(1)
  })

  it('pages the messages newest first, and refuses a page address it did not make', async () => {
    for (let n = 0; n < 55; n++) await operator.post(`${OUTBOX}/test`, { to: `reader-${n}@example.org` })
    const first = await operator.get(OUTBOX)
    expect(first.body.match(/<tr><td>/g)).toHaveLength(50)
    expect(first.body.indexOf('reader-54@example.org')).toBeLessThan(first.body.indexOf('reader-10@example.org'))
    const older = /href="(\/dashboard\/operator\/outbox\?before=\d+)"/.exec(first.body)![1]!
    const second = await operator.get(older)
    expect(second.body.match(/<tr><td>/g)).toHaveLength(6)
    expect(second.body).toContain('reader-0@example.org')
    expect(second.body).not.toContain('Older messages')
    expect((await operator.get(`${OUTBOX}?before=x1`)).statusCode).toBe(400)
  })
})

describe('the Outbox page, SMTP_URL set', () => {
  const clock = new ManualClock(START)
  let storage: Storage
  let server: SmtpTestServer
  let listening: ListeningApp
  let operator: DashboardClient

  beforeAll(async () => {
    server = new SmtpTestServer()
    await server.start()
    storage = await createTestStorage({ catalog: false })
    listening = await listeningApp({
      config: testConfig({ SMTP_URL: server.url, MAIL_FROM: 'Curriculum <mail@curriculum.example.org>' }),
      storage,
      clock,
      logger: false,
      pollChanges: false,
    })
    const socket = (request: HttpRequest) => listening.client.request(request)
    operator = await signedInOperator({ app: listening.app, storage, clock }, '192.0.2.70', socket)
  })
  afterAll(async () => {
    await listening?.close()
    await storage?.close()
    await server?.stop()
  })

  it('sends the test message through the SMTP server and shows it sent', async () => {
    const res = await operator.post(`${OUTBOX}/test`, { to: 'ops@example.org' })
    expect(res.statusCode).toBe(303)
    expect((await operator.follow(res)).body).toContain('it is sent within seconds; its state is below.')
    expect(await listening.app.services.mail!.run()).toBe(1)
    expect(server.arrived.map((m) => [m.from, m.to])).toEqual([['mail@curriculum.example.org', ['ops@example.org']]])
    const page = await operator.get(OUTBOX)
    expect(page.body).toContain('Mail is sent through the SMTP server')
    expect(page.body).toContain('<span class="state sent">sent</span>')
    expect(page.body).toContain('In the outbox: 1 sent.')
  })
})
