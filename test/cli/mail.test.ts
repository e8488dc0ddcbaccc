/**
 * `curriculum mail test`: a bad address is a usage error (exit 2) and writes nothing; a good one
 * queues the test message with its audit row, and a server's mail worker then sends it to a real
 * SMTP server started here.
 */
import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import { systemClock } from '../../src/clock.js'
import { MailWorker } from '../../src/mail/mail-worker.js'
import { SmtpTestServer } from '../support/smtp-test-server.js'
import { cli, jsonOf, newDatabaseUrl, useCliHarness, withStorage } from './cli-harness.js'

useCliHarness()

describe('curriculum mail test', () => {
  it('refuses anything but one address with exit 2, writing nothing', async () => {
    const databaseUrl = newDatabaseUrl()
    for (const to of ['nobody', 'a@example.org, b@example.org', 'Ops <ops@example.org>']) {
      const result = await cli(['mail', 'test', '--to', to, '--json'], { databaseUrl })
      expect(result.status, to).toBe(2)
      expect(jsonOf(result).error.message).toContain('expected one e-mail address')
    }
    const missing = await cli(['mail', 'test'], { databaseUrl })
    expect(missing.status).toBe(2)
    expect(missing.stderr).toContain("required option '--to <address>' not specified")
    await withStorage(databaseUrl, async ({ db }) => {
      expect(await db.selectFrom('mail_outbox').selectAll().execute()).toEqual([])
      expect(await db.selectFrom('audit_log').selectAll().execute()).toEqual([])
    })
  })

  it('queues the test message, audited, and a server with SMTP_URL sends it', async () => {
    const databaseUrl = newDatabaseUrl()
    const env = { PUBLIC_URL: 'https://curriculum.example.org' }
    const queued = await cli(['mail', 'test', '--to', 'ops@example.org', '--json'], { databaseUrl, env })
    expect(queued.status).toBe(0)
    const { mail } = jsonOf(queued)
    expect(mail).toEqual({ id: expect.any(Number), kind: 'test', to: 'ops@example.org', state: 'pending' })
    const text = await cli(['mail', 'test', '--to', 'ops@example.org', '--actor', 'Sam'], { databaseUrl, env })
    expect(text.stdout).toBe(
      `queued test message ${mail.id + 1} to ops@example.org; SMTP_URL is unset here: a server without it keeps it ` +
        "in the outbox (the dashboard's Outbox page)\n",
    )
    const server = new SmtpTestServer()
    await server.start()
    try {
      await withStorage(databaseUrl, async ({ db }) => {
        const audits = await db.selectFrom('audit_log').selectAll().orderBy('id').execute()
        expect(audits.map((row) => [row.action, row.target])).toEqual([
          ['mail.test', `mail:${mail.id}`],
          ['mail.test', `mail:${mail.id + 1}`],
        ])
        expect(audits[1]!.actor).toBe('cli:Sam')
        expect(JSON.parse(audits[0]!.detail)).toMatchObject({
          command: 'mail test',
          changed: { to: 'ops@example.org' },
        })
        const smtp = {
          url: server.url,
          from: 'Curriculum API <no-reply@curriculum.example.org>',
          connectionTimeoutMs: 2000,
          greetingTimeoutMs: 2000,
          socketTimeoutMs: 2000,
        }
        const worker = new MailWorker({ db, clock: systemClock, log: pino({ level: 'silent' }), smtp })
        expect(await worker.run()).toBe(2)
      })
      expect(server.arrived.map((m) => m.to)).toEqual([['ops@example.org'], ['ops@example.org']])
      expect(server.arrived[0]!.raw).toContain('https://curriculum.example.org/dashboard/operator/outbox')
    } finally {
      await server.stop()
    }
  })
})
