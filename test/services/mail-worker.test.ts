/**
 * The mail worker against a real SMTP server started here (smtp-server), on this run's engine:
 * what arrives (text and HTML, envelope, Message-ID), a server that refuses for good, one that
 * defers then accepts (the clock is moved, no backoff is slept through), one that hangs, one
 * stopped and started again mid-queue, two workers racing for one queue, and a send whose process
 * died holding its lease. Every message arrives at most once.
 */
import { pino } from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { claimMail, LEASE_RAN_OUT, queueTestMail, recordMailAttempt, sendMailAgain } from '../../src/cases/mail.js'
import { isoAt, ManualClock } from '../../src/clock.js'
import { MAIL_RETRY_DELAYS_MS, MAX_MAIL_ATTEMPTS } from '../../src/domain/mail-outcome.js'
import { MailWorker } from '../../src/mail/mail-worker.js'
import type { SmtpSettings } from '../../src/mail/smtp-sender.js'
import { openStorage, type Storage } from '../../src/storage/connection.js'
import { findMail } from '../../src/storage/mail-outbox-repository.js'
import type { MailRow } from '../../src/storage/tables.js'
import { createTestStorage, freshDatabaseUrl, START } from '../helper.js'
import { perSuite } from '../support/built.js'
import { SmtpTestServer } from '../support/smtp-test-server.js'
import { waitFor } from '../support/wait-for.js'

const FROM = 'Curriculum API <no-reply@curriculum.test>'
const PUBLIC_URL = 'https://curriculum.test'
const DAY = 86_400_000

describe('the mail worker', () => {
  const url = freshDatabaseUrl()
  const storage = perSuite(() => createTestStorage({ url, catalog: false }))
  const clock = new ManualClock(START)
  const log = pino({ level: 'silent' })
  let server: SmtpTestServer

  beforeEach(async () => {
    await storage.db.deleteFrom('mail_outbox').execute()
    server = new SmtpTestServer()
    await server.start()
  })
  afterEach(async () => server.stop())

  const worker = (settings: Partial<SmtpSettings> = {}, on: Storage = storage, concurrency?: number) =>
    new MailWorker({
      db: on.db,
      clock,
      log,
      smtp: {
        url: server.url,
        from: FROM,
        connectionTimeoutMs: 2000,
        greetingTimeoutMs: 2000,
        socketTimeoutMs: 2000,
        ...settings,
      },
      ...(concurrency === undefined ? {} : { concurrency }),
    })
  const queue = (to = 'reader@example.org') => queueTestMail(storage.db, to, PUBLIC_URL, clock.now())
  const mail = async (id: number): Promise<MailRow> => (await findMail(storage.db, id))!

  it('sends the plain-text and HTML bodies from MAIL_FROM, and records it sent with its Message-ID', async () => {
    const id = await queue()
    expect(await worker().run()).toBe(1)
    expect(server.arrived).toHaveLength(1)
    const [got] = server.arrived
    expect(got).toMatchObject({ from: 'no-reply@curriculum.test', to: ['reader@example.org'] })
    expect(got!.subject).toBe('Curriculum API test message')
    expect(got!.raw).toMatch(/^Content-Type: multipart\/alternative/im)
    expect(got!.raw).toMatch(/^Content-Type: text\/plain/im)
    expect(got!.raw).toMatch(/^Content-Type: text\/html/im)
    expect(got!.raw).toContain('https://curriculum.test/dashboard/operator/outbox')
    expect(got!.messageId).toMatch(new RegExp(`^<mail-${id}\\.[0-9a-z]+@curriculum\\.test>$`))
    expect(await mail(id)).toMatchObject({
      state: 'sent',
      attempts: 1,
      sent_at: isoAt(clock.now()),
      message_id: got!.messageId,
      last_error: null,
      lease_until: null,
      next_attempt_at: null,
    })
    // Nothing is due: a second run sends nothing.
    expect(await worker().run()).toBe(0)
    expect(server.arrived).toHaveLength(1)
  })

  it('logs in with the credentials of SMTP_URL', async () => {
    const guarded = new SmtpTestServer({ auth: { user: 'mailer', pass: 's3cret' } })
    await guarded.start()
    try {
      const id = await queue()
      await worker({ url: guarded.url }).run()
      expect(guarded.arrived).toHaveLength(1)
      expect((await mail(id)).state).toBe('sent')
      const wrong = await queue()
      await worker({ url: guarded.url.replace('s3cret', 'wrong') }).run()
      expect(await mail(wrong)).toMatchObject({ state: 'failed', attempts: 1 })
      expect((await mail(wrong)).last_error).toContain('535')
      expect(guarded.arrived).toHaveLength(1)
    } finally {
      await guarded.stop()
    }
  })

  it('fails a message at once, with the server’s answer, when the server refuses it for good (5xx)', async () => {
    server.script = [{ rcpt: 550, text: 'No such user here' }]
    const id = await queue()
    expect(await worker().run()).toBe(1)
    const failed = await mail(id)
    expect(failed).toMatchObject({ state: 'failed', attempts: 1, next_attempt_at: null, sent_at: null })
    expect(failed.last_error).toMatch(/550 No such user here.*\(RCPT TO\)/)
    clock.advance(DAY)
    expect(await worker().run()).toBe(0)
    expect(server.connections).toBe(1)
    expect(server.arrived).toHaveLength(0)
  })

  it('sends a deferred message again after each delay (4xx before and after the body), then once it is accepted', async () => {
    server.script = [{ rcpt: 451, text: 'Try again later' }, { data: 452, text: 'Mailbox full for now' }, 'accept']
    const id = await queue()
    const run = () => worker().run()
    expect(await run()).toBe(1)
    let row = await mail(id)
    expect(row).toMatchObject({ state: 'pending', attempts: 1, next_attempt_at: isoAt(clock.now() + 60_000) })
    expect(row.last_error).toContain('451 Try again later')
    clock.advance(MAIL_RETRY_DELAYS_MS[0] - 1)
    expect(await run()).toBe(0)
    clock.advance(1)
    expect(await run()).toBe(1)
    row = await mail(id)
    expect(row).toMatchObject({ state: 'pending', attempts: 2 })
    expect(row.next_attempt_at).toBe(isoAt(clock.now() + MAIL_RETRY_DELAYS_MS[1]))
    expect(row.last_error).toMatch(/452 Mailbox full for now/)
    clock.advance(MAIL_RETRY_DELAYS_MS[1])
    expect(await run()).toBe(1)
    expect(await mail(id)).toMatchObject({ state: 'sent', attempts: 3 })
    expect(server.arrived).toHaveLength(1)
  })

  it('fails a message deferred at every attempt once its attempts are used up', async () => {
    server.script = Array.from({ length: MAX_MAIL_ATTEMPTS }, () => ({ rcpt: 450, text: 'Mailbox busy' }))
    const id = await queue()
    for (const delay of [...MAIL_RETRY_DELAYS_MS, 0]) {
      expect(await worker().run()).toBe(1)
      clock.advance(delay)
    }
    const row = await mail(id)
    expect(row).toMatchObject({ state: 'failed', attempts: MAX_MAIL_ATTEMPTS, next_attempt_at: null })
    expect(row.last_error).toMatch(/^Gave up after 6 attempts\. Last: .*450 Mailbox busy/)
    clock.advance(DAY)
    expect(await worker().run()).toBe(0)
  })

  it('sends again later a message whose server never greeted: nothing can have been delivered', async () => {
    server.script = ['hang-greeting']
    const id = await queue()
    expect(await worker({ greetingTimeoutMs: 300 }).run()).toBe(1)
    const row = await mail(id)
    expect(row).toMatchObject({ state: 'pending', attempts: 1 })
    expect(row.last_error).toMatch(/^ETIMEDOUT: .*Greeting never received/i)
    clock.advance(MAIL_RETRY_DELAYS_MS[0])
    expect(await worker({ greetingTimeoutMs: 300 }).run()).toBe(1)
    expect(await mail(id)).toMatchObject({ state: 'sent', attempts: 2 })
    expect(server.arrived).toHaveLength(1)
  })

  it('interrupts a message whose server took the whole body and never answered, and sends it only when asked', async () => {
    server.script = ['hang-after-body']
    const id = await queue()
    expect(await worker({ socketTimeoutMs: 300 }).run()).toBe(1)
    const row = await mail(id)
    expect(row).toMatchObject({ state: 'interrupted', attempts: 1, next_attempt_at: null })
    expect(row.last_error).toMatch(/^ETIMEDOUT: /)
    clock.advance(DAY)
    expect(await worker().run()).toBe(0)
    // The operator's "Send again": the same Message-ID, so a copy that did arrive is one message to mail clients.
    await sendMailAgain(storage.db, id, clock.now())
    expect(await worker().run()).toBe(1)
    const sent = await mail(id)
    expect(sent).toMatchObject({ state: 'sent', attempts: 1 })
    expect(server.arrived.map((m) => m.messageId)).toEqual([sent.message_id])
  })

  it('ends an attempt cut short by a stopping server before the body, and keeps the message for later', async () => {
    server.script = ['hang-greeting']
    const id = await queue()
    const sending = worker({ greetingTimeoutMs: 60_000 })
    const run = sending.run()
    await waitFor(() => server.connections > 0, { what: 'the connection' })
    await sending.stop()
    expect(await run).toBe(1)
    const row = await mail(id)
    expect(row).toMatchObject({ state: 'pending', attempts: 1 })
    expect(row.last_error).toMatch(/^EABORT: cut short/)
  })

  it('keeps messages queued while the SMTP server is down and sends each once when it is back, from a new worker', async () => {
    const first = await Promise.all([1, 2, 3].map((n) => queue(`first-${n}@example.org`)))
    expect(await worker().run()).toBe(3)
    expect(server.arrived).toHaveLength(3)
    await server.stop()
    const second = await Promise.all([1, 2, 3].map((n) => queue(`second-${n}@example.org`)))
    expect(await worker().run()).toBe(3)
    for (const id of second) {
      const row = await mail(id)
      expect(row).toMatchObject({ state: 'pending', attempts: 1 })
      expect(row.last_error).toMatch(/ECONNREFUSED/)
    }
    // Started again on the same port; the worker of an instance restarted meanwhile takes over.
    await server.start()
    clock.advance(MAIL_RETRY_DELAYS_MS[0])
    expect(await worker().run()).toBe(3)
    const arrived = server.arrived.map((m) => m.to[0]).sort()
    expect(arrived).toEqual([1, 2, 3].flatMap((n) => [`first-${n}@example.org`, `second-${n}@example.org`]).sort())
    expect(new Set(server.arrived.map((m) => m.messageId)).size).toBe(6)
    for (const id of [...first, ...second]) expect((await mail(id)).state).toBe('sent')
  })

  it('sends every message exactly once while two instances race for the queue', async () => {
    // A second connection to the same database, as a second instance has.
    const other = openStorage(url, { busyTimeoutMs: 1000 })
    try {
      const ids: number[] = []
      for (let n = 0; n < 24; n++) ids.push(await queue(`race-${n}@example.org`))
      const [a, b] = await Promise.all([worker({}, storage, 3).run(), worker({}, other, 3).run()])
      expect(a + b).toBe(24)
      // Both took part: one that lost a claim to the other went on with the next messages.
      expect(Math.min(a, b)).toBeGreaterThan(0)
      expect(server.arrived).toHaveLength(24)
      expect(new Set(server.arrived.map((m) => m.to[0])).size).toBe(24)
      for (const id of ids) expect(await mail(id)).toMatchObject({ state: 'sent', attempts: 1 })
    } finally {
      await other.close()
    }
  })

  it('interrupts a send whose process died holding its lease, and never sends it', async () => {
    const id = await queue()
    // Claimed by an instance that then died mid-send.
    const { claimed } = await claimMail(storage.db, clock.now(), 60_000, 10)
    expect(claimed.map((row) => row.id)).toEqual([id])
    clock.advance(59_999)
    expect(await worker().run()).toBe(0)
    expect((await mail(id)).state).toBe('sending')
    clock.advance(1)
    expect(await worker().run()).toBe(0)
    expect(await mail(id)).toMatchObject({ state: 'interrupted', attempts: 1, last_error: LEASE_RAN_OUT })
    clock.advance(DAY)
    expect(await worker().run()).toBe(0)
    expect(server.connections).toBe(0)
    // Had it been alive after all, what it learnt is recorded: its claim is still the row's.
    const late = await recordMailAttempt(
      storage.db,
      claimed[0]!,
      { ok: true, messageId: '<late@curriculum.test>', response: '250 Ok' },
      clock.now(),
    )
    expect(late).toMatchObject({ state: 'sent', recorded: true })
    expect(await mail(id)).toMatchObject({ state: 'sent', message_id: '<late@curriculum.test>' })
  })

  it('leaves a message the operator queued again alone when the interrupted claim reports late', async () => {
    const id = await queue()
    const { claimed } = await claimMail(storage.db, clock.now(), 1000, 10)
    clock.advance(1000)
    expect((await claimMail(storage.db, clock.now(), 1000, 10)).interrupted).toEqual([id])
    await sendMailAgain(storage.db, id, clock.now())
    const late = await recordMailAttempt(
      storage.db,
      claimed[0]!,
      { ok: false, failure: { code: 'ECONNECTION', message: 'Connection closed', bodySent: true } },
      clock.now(),
    )
    expect(late.recorded).toBe(false)
    expect(await mail(id)).toMatchObject({ state: 'pending', attempts: 0 })
  })
})
