/**
 * Webhooks and children's data: nothing about a student is sent once the organisation's access
 * has ended (checked when the event is queued, at every attempt, and on resend), and every send
 * is in the disclosure log exactly once, whatever the receiver answered.
 */
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ManualClock } from '../../src/clock.js'
import { RETRY_DELAYS_MS } from '../../src/domain/webhook-events.js'
import { setOrganisationStatus } from '../../src/storage/access-repository.js'
import { endAgreements } from '../../src/cases/agreement-end.js'
import { recordAgreement } from '../../src/cases/agreement-record.js'
import { openStorage, type Storage } from '../../src/storage/connection.js'
import { listDisclosures } from '../../src/storage/disclosure-log.js'
import { linkStudents } from '../../src/storage/student-import-repository.js'
import { enrollStudent } from '../../src/cases/enroll.js'
import type { WebhookEndpointRow } from '../../src/storage/tables.js'
import { createEndpoint } from '../../src/storage/webhook-endpoint-repository.js'
import { resendDelivery } from '../../src/cases/webhook-endpoints.js'
import { announceCatalogPublished, listDeliveries } from '../../src/storage/webhook-repository.js'
import { leaseMs, WebhookDeliverer } from '../../src/webhooks/webhook-deliverer.js'
import { createTestStorage, type Fixtures, freshDatabaseUrl, START, STUDENTS, seedFixtures } from '../helper.js'
import { clearWebhooks, Receiver, refusingUrl } from '../support/webhook-receiver.js'
import { perSuite } from '../support/built.js'

describe('webhooks and access to students', () => {
  const url = freshDatabaseUrl()
  const storage = perSuite(() => createTestStorage({ url }))
  let fixtures: Fixtures
  let receiver: Receiver
  let base: string
  const clock = new ManualClock(START)
  let hook: WebhookEndpointRow
  const deliverer = (s: Storage = storage, timeoutMs = 2000) =>
    new WebhookDeliverer({ storage: s, clock, log: console as never, timeoutMs, allowLoopback: true })

  beforeAll(async () => {
    fixtures = await seedFixtures(storage, START)
  })
  beforeEach(async () => {
    receiver = new Receiver()
    base = await receiver.start()
    await clearWebhooks(storage.db)
    hook = (
      await createEndpoint(
        storage.db,
        { organisationId: fixtures.orgs.acme, mode: 'live', url: `${base}/acme`, events: ['student.tier_changed'] },
        clock.now(),
      )
    ).endpoint
  })
  afterEach(async () => receiver.stop())

  /** Changes Ada's tier (through Acme, to whichever of two tiers she does not have): one event. */
  async function changeAda(): Promise<void> {
    clock.advance(1000)
    const access = {
      at: clock.now(),
      requestId: `req-${clock.now()}`,
      keyId: fixtures.keyIds.write,
      organisationId: fixtures.orgs.acme,
      sandbox: false,
    }
    const first = await enrollStudent(storage.writes, STUDENTS.ada, 'builder', access, clock.now())
    if (!first!.changed) await enrollStudent(storage.writes, STUDENTS.ada, 'explorer', access, clock.now())
  }
  const webhookRows = (deliveryId: string) =>
    listDisclosures(storage.db, { action: 'webhook' }).then((rows) =>
      rows.filter((row) => row.request_id === deliveryId).map((row) => row.outcome),
    )
  const deliveriesOf = (endpointId = hook.id) => listDeliveries(storage.db, endpointId)

  const endings = [
    {
      name: 'the agreement was ended',
      outcome: 'denied_agreement',
      reason: /no data-sharing agreement/,
      end: () => endAgreements(storage.db, { organisationId: fixtures.orgs.acme }, clock.now()),
      restore: () =>
        recordAgreement(
          storage.db,
          { organisationId: fixtures.orgs.acme, signedAt: clock.now(), expiresAt: null, documentRef: 'DSA-again' },
          clock.now(),
        ),
    },
    {
      name: 'the organisation was suspended',
      outcome: 'denied_suspended',
      reason: /suspended/,
      end: () => setOrganisationStatus(storage.db, fixtures.orgs.acme, 'suspended'),
      restore: () => setOrganisationStatus(storage.db, fixtures.orgs.acme, 'active'),
    },
    {
      name: 'the student was unlinked',
      outcome: 'denied_unlinked',
      reason: /no longer linked/,
      end: () =>
        storage.db
          .deleteFrom('student_organisations')
          .where('student_id', '=', STUDENTS.ada)
          .where('organisation_id', '=', fixtures.orgs.acme)
          .execute(),
      restore: () =>
        linkStudents(storage.db, [{ studentId: STUDENTS.ada, organisationId: fixtures.orgs.acme }], clock.now()),
    },
  ] as const

  for (const ending of endings) {
    it(`sends nothing about a student once ${ending.name}: the retry and new events end "not sent", each refusal disclosed`, async () => {
      const catalogHook = await createEndpoint(
        storage.db,
        { organisationId: fixtures.orgs.acme, mode: 'live', url: `${base}/catalog`, events: ['catalog.published'] },
        clock.now(),
      )
      // Sent while access lasts; the receiver answers 500, so it is due again in 5 s.
      receiver.script = [500]
      await changeAda()
      expect(await deliverer().run()).toBe(1)
      const [queued] = await deliveriesOf()
      await ending.end()
      try {
        clock.advance(RETRY_DELAYS_MS[0])
        await deliverer().run()
        expect(receiver.received.map((r) => r.path)).toEqual(['/acme'])
        const [refused] = await deliveriesOf()
        expect(refused).toMatchObject({ id: queued!.id, state: 'not_sent', next_attempt_at: null, attempts: 1 })
        expect(refused!.last_error).toMatch(ending.reason)
        // Newest first: the refusal of the retry, after the first send.
        expect(await webhookRows(queued!.id)).toEqual([ending.outcome, 'sent_unacknowledged'])

        // A change while access is off is not queued to be sent at all (an unlinked student's
        // organisation is not even told of it). The catalog is not student data: it still goes.
        if (ending.outcome !== 'denied_unlinked') {
          await changeAda()
          const [fresh] = await deliveriesOf()
          expect(fresh).toMatchObject({ state: 'not_sent', attempts: 0 })
          expect(await webhookRows(fresh!.id)).toEqual([ending.outcome])
        }
        await storage.writes.transaction((trx) =>
          announceCatalogPublished(trx, { catalogVersion: 9, tiers: 3, lessons: 30 }, clock.now()),
        )
        await deliverer().run()
        expect(receiver.received.map((r) => r.path)).toEqual(['/acme', '/catalog'])
        expect((await deliveriesOf(catalogHook.endpoint.id))[0]!.state).toBe('delivered')
      } finally {
        await ending.restore()
      }
      // Access back: events are sent again.
      await changeAda()
      await deliverer().run()
      expect(receiver.received.map((r) => r.path)).toEqual(['/acme', '/catalog', '/acme'])
    })
  }

  it('refuses to resend a student event once access has ended, says why and discloses the refusal', async () => {
    await changeAda()
    await deliverer().run()
    const [sent] = await deliveriesOf()
    expect(sent!.state).toBe('delivered')
    await setOrganisationStatus(storage.db, fixtures.orgs.acme, 'suspended')
    try {
      expect(await resendDelivery(storage.db, sent!.id, hook, clock.now())).toEqual({
        outcome: 'refused',
        refusal: 'denied_suspended',
      })
      expect(await deliverer().run()).toBe(0)
      expect(receiver.received).toHaveLength(1)
      expect((await deliveriesOf())[0]!.state).toBe('delivered')
      expect(await webhookRows(sent!.id)).toEqual(['denied_suspended', 'disclosed'])
    } finally {
      await setOrganisationStatus(storage.db, fixtures.orgs.acme, 'active')
    }
    // Once reinstated it may be resent; it was disclosed already, so no second row.
    expect(await resendDelivery(storage.db, sent!.id, hook, clock.now())).toEqual({ outcome: 'queued' })
    expect(await deliverer().run()).toBe(1)
    expect(receiver.received).toHaveLength(2)
    expect(await webhookRows(sent!.id)).toEqual(['denied_suspended', 'disclosed'])
  })

  it('discloses every send once, whatever the answer: 500, timeout, then success and resend add nothing; a refused connection sent nothing', async () => {
    const closed = await createEndpoint(
      storage.db,
      { organisationId: fixtures.orgs.acme, mode: 'live', url: await refusingUrl(), events: ['student.tier_changed'] },
      clock.now(),
    )
    receiver.script = [500]
    await changeAda()
    expect(await deliverer().run()).toBe(2)
    const [answered] = await deliveriesOf()
    const [refused] = await deliveriesOf(closed.endpoint.id)
    expect(answered!.last_status).toBe(500)
    expect(refused!.last_error).toBe('ECONNREFUSED')
    expect(await webhookRows(answered!.id)).toEqual(['sent_unacknowledged'])
    expect(await webhookRows(refused!.id)).toEqual([])

    clock.advance(RETRY_DELAYS_MS[0])
    expect(await deliverer().run()).toBe(2)
    expect((await deliveriesOf())[0]!.state).toBe('delivered')
    expect(await resendDelivery(storage.db, answered!.id, hook, clock.now())).toEqual({ outcome: 'queued' })
    await deliverer().run()
    expect(receiver.received).toHaveLength(3)
    expect(await webhookRows(answered!.id)).toEqual(['sent_unacknowledged'])
    expect(await webhookRows(refused!.id)).toEqual([])

    // The body was written, then no answer came in time.
    receiver.script = ['hang']
    await changeAda()
    await deliverer(storage, 300).run()
    const [timedOut] = await deliveriesOf()
    expect(timedOut!.last_error).toBe('timed out')
    expect(await webhookRows(timedOut!.id)).toEqual(['sent_unacknowledged'])
  })

  it('writes one row for a delivery two instances sent at once and record at once', async () => {
    const other = openStorage(url)
    try {
      receiver.script = ['hold', 'hold']
      await changeAda()
      const [delivery] = await deliveriesOf()
      // The first instance sends and waits; its lease runs out; the second sends it again.
      const first = deliverer(storage, 5000).run()
      await receiver.arrived(1)
      clock.advance(leaseMs(5000))
      const second = deliverer(other, 5000).run()
      await receiver.arrived(2)
      receiver.release(500)
      await Promise.all([first, second])
      expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([delivery!.id, delivery!.id])
      expect(await webhookRows(delivery!.id)).toEqual(['sent_unacknowledged'])
    } finally {
      await other.close()
    }
  })
})
