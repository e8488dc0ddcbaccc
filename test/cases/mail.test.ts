/**
 * The mail case's own promises: it refuses anything but one plain address and keeps a subject on
 * one line, a test message is audited with its queueing, and no mail can carry student data (the
 * case reads nothing about students, and a message is made of an address, words and a link).
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type HeldMail, pruneMailOutbox, queueMail, queueTestMail, testMail } from '../../src/cases/mail.js'
import { ManualClock } from '../../src/clock.js'
import { ConflictError } from '../../src/domain/errors.js'
import type { Storage } from '../../src/storage/connection.js'
import { findMail } from '../../src/storage/mail-outbox-repository.js'
import type { MailState } from '../../src/storage/tables.js'
import { createTestStorage } from '../helper.js'

const SRC = path.resolve(import.meta.dirname, '../../src')

describe('the mail case', () => {
  let storage: Storage
  const clock = new ManualClock('2026-03-02T09:00:00.000Z')
  beforeEach(async () => {
    storage = await createTestStorage({ catalog: false })
  })
  afterEach(() => storage.close())

  it('refuses a list, a name or a header as the recipient, and writes nothing', async () => {
    for (const to of ['a@example.org, b@example.org', 'Ops <ops@example.org>', 'a@example.org\r\nBcc: b@example.org']) {
      await expect(queueTestMail(storage.db, to, 'https://x.example', clock.now())).rejects.toThrow(ConflictError)
    }
    expect(await storage.db.selectFrom('mail_outbox').selectAll().execute()).toEqual([])
    expect(await storage.db.selectFrom('audit_log').selectAll().execute()).toEqual([])
  })

  it('queues a message pending and due at once, its subject on one line, and announces it once written', async () => {
    const held: HeldMail[] = []
    const id = await queueMail(
      storage.db,
      { kind: 'test', to: 'ops@example.org', subject: 'Two\r\nlines', text: 'Hello', html: null, link: null },
      clock.now(),
      (mail) => held.push(mail),
    )
    expect(await findMail(storage.db, id)).toMatchObject({
      state: 'pending',
      attempts: 0,
      subject: 'Two lines',
      next_attempt_at: '2026-03-02T09:00:00.000Z',
      html_body: null,
    })
    expect(held).toEqual([{ id, kind: 'test', subject: 'Two lines', link: null }])
  })

  it('audits an operator’s test message in its transaction', async () => {
    const id = await queueTestMail(storage.db, 'ops@example.org', 'https://x.example', clock.now(), {
      audit: { actor: 'account:ops@example.org' },
    })
    const [row] = await storage.db.selectFrom('audit_log').selectAll().execute()
    expect(row).toMatchObject({ actor: 'account:ops@example.org', action: 'mail.test', target: `mail:${id}` })
  })

  it('deletes the messages over for longer than the retention period, and keeps pending and recent ones', async () => {
    const DAY = 86_400_000
    const queue = async (at: number, state: MailState) => {
      const id = await queueMail(
        storage.db,
        { kind: 'test', to: 'ops@example.org', subject: state, text: 'Hello', html: null, link: null },
        at,
      )
      await storage.db.updateTable('mail_outbox').set({ state }).where('id', '=', id).execute()
      return id
    }
    const now = clock.now()
    const old = now - 31 * DAY
    for (const state of ['sent', 'failed', 'interrupted'] as const) await queue(old, state)
    const kept = [
      await queue(old, 'pending'),
      await queue(old, 'sending'),
      await queue(now - 29 * DAY, 'sent'),
      await queue(now, 'failed'),
    ]
    expect(await pruneMailOutbox(storage.db, now, 30)).toBe(3)
    const left = await storage.db.selectFrom('mail_outbox').select('id').orderBy('id').execute()
    expect(left.map((row) => Number(row.id))).toEqual(kept)
    expect(await pruneMailOutbox(storage.db, now, 30)).toBe(0)
  })

  it('makes the test message of fixed words, the service’s address and the outbox’s', () => {
    const mail = testMail('ops@example.org', 'https://curriculum.example.org')
    expect(Object.keys(mail).sort()).toEqual(['html', 'kind', 'link', 'subject', 'text', 'to'])
    expect(mail.text).toBe(
      'This is a test message from the Curriculum API at https://curriculum.example.org.\n\n' +
        'An operator sent it to check that outgoing mail works. If it reached you, it does; nothing else needs doing.\n\n' +
        'The outbox: https://curriculum.example.org/dashboard/operator/outbox\n',
    )
    expect(mail.html).toContain('<a href="https://curriculum.example.org/dashboard/operator/outbox">')
    expect(mail.link).toBe('https://curriculum.example.org/dashboard/operator/outbox')
  })

  it('reads nothing about students: no module of student data is imported by the mail path', () => {
    const modules = ['cases/mail.ts', 'mail/mail-worker.ts', 'mail/smtp-sender.ts', 'mail/held-mail-log.ts']
    for (const module of modules) {
      const imports = [...fs.readFileSync(path.join(SRC, module), 'utf8').matchAll(/from '(\.[^']+)'/g)].map(
        (m) => m[1]!,
      )
      expect(
        imports.filter((name) => /student|progress|roster|disclosure|share|school/.test(name)),
        module,
      ).toEqual([])
    }
  })
})
