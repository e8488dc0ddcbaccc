/**
 * `student.unlinked` and `student.deleted` webhooks: queued to the endpoints of the organisation
 * concerned that subscribed, carrying the student's id only, signed like every delivery, and
 * sent (and resent) whatever the organisation's access now, since they ask the partner to delete
 * what it holds; each send is disclosed once. An erasure stops the deliveries about the student
 * that were not sent yet; the other events keep every access check.
 */
import { Webhook } from 'standardwebhooks'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ManualClock } from '../../src/clock.js'
import { endAgreements } from '../../src/cases/agreement-end.js'
import { recordAgreement } from '../../src/cases/agreement-record.js'
import { setOrganisationStatus } from '../../src/storage/access-repository.js'
import { listDisclosures } from '../../src/storage/disclosure-log.js'
import { enrollStudent } from '../../src/cases/enroll.js'
import { eraseStudents } from '../../src/cases/erasure.js'
import { unlinkStudent } from '../../src/cases/unlink.js'
import { ERASED_REASON } from '../../src/storage/student-removal-repository.js'
import type { WebhookEndpointRow } from '../../src/storage/tables.js'
import { createEndpoint } from '../../src/storage/webhook-endpoint-repository.js'
import { resendDelivery } from '../../src/cases/webhook-endpoints.js'
import { listDeliveries } from '../../src/storage/webhook-repository.js'
import { WebhookDeliverer } from '../../src/webhooks/webhook-deliverer.js'
import { createTestStorage, type Fixtures, STUDENTS, seedFixtures } from '../helper.js'
import { clearWebhooks, Receiver } from '../support/webhook-receiver.js'
import { perSuite } from '../support/built.js'

describe('webhooks of students who leave', () => {
  const storage = perSuite(() => createTestStorage())
  let fixtures: Fixtures
  let receiver: Receiver
  // Near the real time: the reference verifier refuses timestamps more than five minutes off.
  const clock = new ManualClock(Math.floor(Date.now() / 1000) * 1000)
  let notices: { endpoint: WebhookEndpointRow; secret: string }
  let others: WebhookEndpointRow
  const deliverer = () =>
    new WebhookDeliverer({ storage, clock, log: console as never, timeoutMs: 2000, allowLoopback: true })

  beforeAll(async () => {
    fixtures = await seedFixtures(storage, clock.now())
  })
  beforeEach(async () => {
    receiver = new Receiver()
    const base = await receiver.start()
    await clearWebhooks(storage.db)
    notices = await createEndpoint(
      storage.db,
      {
        organisationId: fixtures.orgs.acme,
        mode: 'live',
        url: `${base}/notices`,
        events: ['student.unlinked', 'student.deleted', 'student.tier_changed'],
      },
      clock.now(),
    )
    others = (
      await createEndpoint(
        storage.db,
        { organisationId: fixtures.orgs.acme, mode: 'live', url: `${base}/others`, events: ['student.tier_changed'] },
        clock.now(),
      )
    ).endpoint
  })
  afterEach(async () => receiver.stop())

  /** Acme loses every kind of access at once: suspended, and its agreement ended. */
  async function endAcmeAccess(): Promise<() => Promise<void>> {
    await setOrganisationStatus(storage.db, fixtures.orgs.acme, 'suspended')
    await endAgreements(storage.db, { organisationId: fixtures.orgs.acme }, clock.now())
    return async () => {
      await setOrganisationStatus(storage.db, fixtures.orgs.acme, 'active')
      await recordAgreement(
        storage.db,
        { organisationId: fixtures.orgs.acme, signedAt: clock.now(), expiresAt: null, documentRef: 'DSA-again' },
        clock.now(),
      )
    }
  }
  const disclosed = async (deliveryId: string) =>
    (await listDisclosures(storage.db, { action: 'webhook' }))
      .filter((row) => row.request_id === deliveryId)
      .map((row) => [row.student_id, row.outcome])

  it('sends student.unlinked, ids only and signed, to the endpoints that subscribed, though access has ended', async () => {
    const restore = await endAcmeAccess()
    try {
      clock.advance(1000)
      expect(await unlinkStudent(storage.db, STUDENTS.dev, fixtures.orgs.acme, clock.now())).toEqual({
        unlinked: true,
        webhooks: 1,
      })
      expect(await deliverer().run()).toBe(1)
      expect(receiver.received.map((r) => r.path)).toEqual(['/notices'])
      const [arrived] = receiver.received
      const body = new Webhook(notices.secret).verify(arrived!.body, {
        'webhook-id': String(arrived!.headers['webhook-id']),
        'webhook-timestamp': String(arrived!.headers['webhook-timestamp']),
        'webhook-signature': String(arrived!.headers['webhook-signature']),
      })
      expect(body).toEqual({
        type: 'student.unlinked',
        timestamp: new Date(clock.now()).toISOString(),
        data: { profileId: STUDENTS.dev },
      })
      const [delivery] = await listDeliveries(storage.db, notices.endpoint.id)
      expect(delivery).toMatchObject({ state: 'delivered', event_type: 'student.unlinked', student_id: STUDENTS.dev })
      expect(await disclosed(delivery!.id)).toEqual([[STUDENTS.dev, 'disclosed']])
      expect(await listDeliveries(storage.db, others.id)).toEqual([])

      // Resent by the partner: still allowed, still one disclosure row.
      expect(await resendDelivery(storage.db, delivery!.id, notices.endpoint, clock.now())).toEqual({
        outcome: 'queued',
      })
      expect(await deliverer().run()).toBe(1)
      expect(await disclosed(delivery!.id)).toEqual([[STUDENTS.dev, 'disclosed']])
    } finally {
      await restore()
    }
  })

  it('sends student.deleted on an erasure and stops the deliveries about the student not sent yet', async () => {
    // A tier change queued while access lasts, not sent yet.
    clock.advance(1000)
    const access = {
      at: clock.now(),
      requestId: 'req-enroll',
      keyId: fixtures.keyIds.write,
      organisationId: fixtures.orgs.acme,
      sandbox: false,
    }
    const enrolled = await enrollStudent(storage.writes, STUDENTS.ada, 'innovator', access, clock.now())
    expect(enrolled!.changed).toBe(true)
    const [queued] = await listDeliveries(storage.db, others.id)
    expect(queued).toMatchObject({ state: 'pending', event_type: 'student.tier_changed' })

    const restore = await endAcmeAccess()
    try {
      clock.advance(1000)
      const outcome = await eraseStudents(storage.db, [STUDENTS.ada], clock.now())
      expect(outcome).toMatchObject({ cancelledDeliveries: 2, webhooks: 1 })
      expect(await deliverer().run()).toBe(1)
      expect(receiver.received.map((r) => [r.path, JSON.parse(r.body).type, JSON.parse(r.body).data])).toEqual([
        ['/notices', 'student.deleted', { profileId: STUDENTS.ada }],
      ])
      const cancelled = await listDeliveries(storage.db, others.id)
      expect(cancelled.map((d) => [d.id, d.state, d.last_error, d.payload])).toEqual([
        [queued!.id, 'not_sent', ERASED_REASON, '{"erased":true}'],
      ])
      // Nothing about an erased student is resent but the notice.
      expect(await resendDelivery(storage.db, queued!.id, others, clock.now())).toMatchObject({ outcome: 'refused' })
    } finally {
      await restore()
    }
  })
})
