/**
 * The mail outbox's queries on this run's engine: claims take due messages oldest first under a
 * lease, and claimers at once (two connections, as two instances) never take the same message;
 * an outcome is written only while the row is still its claim's; the Outbox page pages newest
 * first.
 */
import { describe, expect, it } from 'vitest'
import { isoAt, ManualClock } from '../../src/clock.js'
import { openStorage, type Storage } from '../../src/storage/connection.js'
import {
  claimDueMail,
  insertMail,
  interruptExpiredSends,
  pageOutbox,
  recordMailOutcome,
  requeueMail,
} from '../../src/storage/mail-outbox-repository.js'
import { inTransaction } from '../../src/storage/transaction.js'
import { createTestStorage, freshDatabaseUrl, START } from '../helper.js'
import { perTest } from '../support/built.js'

const message = (n: number) => ({
  kind: 'test',
  recipient: `reader-${n}@example.org`,
  subject: `Message ${n}`,
  text: `Body ${n}`,
  html: null,
})

describe('the mail outbox', () => {
  let url = ''
  const storage = perTest(() => createTestStorage({ url: (url = freshDatabaseUrl()), catalog: false }))
  const clock = new ManualClock(START)

  const claim = (on: Storage, limit: number, leaseMs = 60_000) =>
    inTransaction(on.db, (trx) => claimDueMail(trx, { now: clock.now(), leaseMs, limit }))

  it('claims due messages oldest first under a lease, counting the attempt, and not again while leased', async () => {
    const ids: number[] = []
    for (let n = 0; n < 5; n++) {
      ids.push(await insertMail(storage.db, message(n), clock.now()))
      clock.advance(10)
    }
    // One not due yet.
    await storage.db
      .updateTable('mail_outbox')
      .set({ next_attempt_at: isoAt(clock.now() + 1000) })
      .where('id', '=', ids[0]!)
      .execute()
    const first = await claim(storage, 2)
    expect(first.map((row) => row.id)).toEqual([ids[1], ids[2]])
    expect(first[0]).toMatchObject({
      state: 'sending',
      attempts: 1,
      next_attempt_at: null,
      lease_until: isoAt(clock.now() + 60_000),
    })
    expect((await claim(storage, 10)).map((row) => row.id)).toEqual([ids[3], ids[4]])
    expect(await claim(storage, 10)).toEqual([])
    clock.advance(1000)
    expect((await claim(storage, 10)).map((row) => row.id)).toEqual([ids[0]])
  })

  it('never gives one message to two claimers at once', async () => {
    // A second connection to the same database, as a second instance has.
    const other = openStorage(url, { busyTimeoutMs: 1000 })
    try {
      const ids: number[] = []
      for (let n = 0; n < 40; n++) ids.push(await insertMail(storage.db, message(n), clock.now()))
      const taken: number[] = []
      for (let round = 0; round < 20 && taken.length < ids.length; round++) {
        const claims = await Promise.all([claim(storage, 3), claim(other, 3), claim(storage, 2), claim(other, 2)])
        for (const rows of claims) taken.push(...rows.map((row) => row.id))
      }
      expect(taken.toSorted((a, b) => a - b)).toEqual(ids)
    } finally {
      await other.close()
    }
  })

  it('writes an outcome only while the row is its claim’s, and puts back only interrupted or failed messages', async () => {
    const id = await insertMail(storage.db, message(1), clock.now())
    const [claimed] = await claim(storage, 1, 1000)
    const sent = { state: 'sent' as const, nextAttemptAt: null, error: null, sentAt: clock.now(), messageId: '<m@x>' }
    // Another claim's lease: not this one's row.
    expect(await recordMailOutcome(storage.db, { ...claimed!, lease_until: isoAt(0) }, sent)).toBe(false)
    expect(await requeueMail(storage.db, claimed!, clock.now())).toBe(false)
    clock.advance(1000)
    expect(await interruptExpiredSends(storage.db, clock.now(), 'stopped')).toEqual([id])
    expect(await recordMailOutcome(storage.db, claimed!, sent)).toBe(true)
    // The lease went with the outcome: the same claim cannot write twice.
    expect(await recordMailOutcome(storage.db, claimed!, { ...sent, state: 'failed' })).toBe(false)
    expect(await requeueMail(storage.db, { id, state: 'sent' }, clock.now())).toBe(false)
    await storage.db.updateTable('mail_outbox').set({ state: 'failed' }).where('id', '=', id).execute()
    expect(await requeueMail(storage.db, { id, state: 'failed' }, clock.now())).toBe(true)
    expect(await requeueMail(storage.db, { id, state: 'failed' }, clock.now())).toBe(false)
  })

  it('pages the outbox newest first', async () => {
    const ids: number[] = []
    for (let n = 0; n < 7; n++) ids.push(await insertMail(storage.db, message(n), clock.now()))
    const first = await pageOutbox(storage.db, { limit: 3 })
    expect(first.rows.map((row) => row.id)).toEqual(ids.slice(4).reverse())
    const second = await pageOutbox(storage.db, { before: first.next!, limit: 3 })
    expect(second.rows.map((row) => row.id)).toEqual(ids.slice(1, 4).reverse())
    const last = await pageOutbox(storage.db, { before: second.next!, limit: 3 })
    expect(last).toEqual({ rows: [expect.objectContaining({ id: ids[0] })], next: null })
  })
})
