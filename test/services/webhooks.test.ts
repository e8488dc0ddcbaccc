import { Webhook } from 'standardwebhooks'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ManualClock } from '../../src/clock.js'
import { RETRY_DELAYS_MS } from '../../src/domain/webhook-events.js'
import { openStorage, type Storage } from '../../src/storage/connection.js'
import { listDisclosures } from '../../src/storage/disclosure-log.js'
import { upsertProgress } from '../../src/storage/student-import-repository.js'
import { enrollStudent } from '../../src/cases/enroll.js'
import { claimDue } from '../../src/storage/webhook-outbox-repository.js'
import { createEndpoint, rollSecret } from '../../src/storage/webhook-endpoint-repository.js'
import { announceCatalogPublished, listDeliveries } from '../../src/storage/webhook-repository.js'
import type { WebhookEndpointRow } from '../../src/storage/tables.js'
import { leaseMs, WebhookDeliverer } from '../../src/webhooks/webhook-deliverer.js'
import { createTestStorage, type Fixtures, freshDatabaseUrl, STUDENTS, seedFixtures } from '../helper.js'
import { clearWebhooks, Receiver } from '../support/webhook-receiver.js'
import { perSuite } from '../support/built.js'

// In order: tests that check signatures with the reference verifier run before the clock moves days ahead.
describe('webhooks', () => {
  const url = freshDatabaseUrl()
  const storage = perSuite(() => createTestStorage({ url }))
  let fixtures: Fixtures
  let receiver: Receiver
  let base: string
  // Near the real time: the reference verifier refuses timestamps more than five minutes off.
  const T0 = Math.floor(Date.now() / 1000) * 1000
  const clock = new ManualClock(T0)
  const deliverer = (s: Storage = storage, timeoutMs = 2000) =>
    new WebhookDeliverer({ storage: s, clock, log: console as never, timeoutMs, allowLoopback: true })
  const access = (organisationId: string) => ({
    at: clock.now(),
    requestId: `req-${Math.random()}`,
    keyId: fixtures.keyIds.write,
    organisationId,
    sandbox: false,
  })
  let acmeHook: { endpoint: WebhookEndpointRow; secret: string }

  beforeAll(async () => {
    fixtures = await seedFixtures(storage, T0)
  })
  beforeEach(async () => {
    receiver = new Receiver()
    base = await receiver.start()
    await clearWebhooks(storage.db)
    acmeHook = await createEndpoint(
      storage.db,
      { organisationId: fixtures.orgs.acme, mode: 'live', url: `${base}/acme`, events: ['student.tier_changed'] },
      clock.now(),
    )
  })
  afterEach(async () => receiver.stop())

  const enroll = (student: string, tier: 'explorer' | 'builder', organisationId = fixtures.orgs.acme) => {
    clock.advance(1000)
    return enrollStudent(storage.writes, student, tier, access(organisationId), clock.now())
  }
  /** Changes the student's tier once (to whichever of the two it is not). */
  const flip = async (student: string) => {
    if (!(await enroll(student, 'builder'))!.changed) await enroll(student, 'explorer')
  }

  it('signs per Standard Webhooks, carries ids and the changed fields, and records the disclosure', async () => {
    await flip(STUDENTS.ada)
    expect(await deliverer().run()).toBe(1)
    expect(receiver.received).toHaveLength(1)
    const [got] = receiver.received
    const verified = new Webhook(acmeHook.secret).verify(got!.body, {
      'webhook-id': String(got!.headers['webhook-id']),
      'webhook-timestamp': String(got!.headers['webhook-timestamp']),
      'webhook-signature': String(got!.headers['webhook-signature']),
    }) as { type: string; data: Record<string, unknown> }
    expect(verified.type).toBe('student.tier_changed')
    expect(Object.keys(verified.data).sort()).toEqual(['profileId', 'tier', 'updatedAt'])
    expect(verified.data.profileId).toBe(STUDENTS.ada)
    expect(got!.headers['webhook-id']).toMatch(/^msg_/)
    // A tampered body fails the reference verification.
    expect(() =>
      new Webhook(acmeHook.secret).verify(got!.body.replace('builder', 'pioneer').replace('explorer', 'pioneer'), {
        'webhook-id': String(got!.headers['webhook-id']),
        'webhook-timestamp': String(got!.headers['webhook-timestamp']),
        'webhook-signature': String(got!.headers['webhook-signature']),
      }),
    ).toThrow()
    const disclosed = await listDisclosures(storage.db, { studentId: STUDENTS.ada, action: 'webhook' })
    expect(disclosed[0]).toMatchObject({ request_id: got!.headers['webhook-id'], outcome: 'disclosed' })
    // Setting the same tier again changes nothing and announces nothing.
    const again = (await enroll(STUDENTS.ada, verified.data.tier as 'explorer' | 'builder'))!
    expect(again.changed).toBe(false)
    expect(await deliverer().run()).toBe(0)
  })

  it('signs with both secrets for a day after a roll, and announces a published catalog to its subscribers', async () => {
    const catalogHook = await createEndpoint(
      storage.db,
      { organisationId: fixtures.orgs.beta, mode: 'test', url: `${base}/catalog`, events: ['catalog.published'] },
      clock.now(),
    )
    const rolled = await rollSecret(storage.db, catalogHook.endpoint, clock.now())
    await storage.writes.transaction((trx) =>
      announceCatalogPublished(trx, { catalogVersion: 7, tiers: 3, lessons: 30 }, clock.now()),
    )
    await deliverer().run()
    const got = receiver.received.find((r) => r.path === '/catalog')!
    const headers = {
      'webhook-id': String(got.headers['webhook-id']),
      'webhook-timestamp': String(got.headers['webhook-timestamp']),
      'webhook-signature': String(got.headers['webhook-signature']),
    }
    for (const secret of [rolled, catalogHook.secret]) {
      expect(new Webhook(secret).verify(got.body, headers)).toMatchObject({ type: 'catalog.published' })
    }
    expect(String(got.headers['webhook-signature']).split(' ')).toHaveLength(2)
  })

  it('announces an import: one progress.updated per student with the entries that changed, nothing for a rerun', async () => {
    await createEndpoint(
      storage.db,
      { organisationId: fixtures.orgs.acme, mode: 'live', url: `${base}/progress`, events: ['progress.updated'] },
      clock.now(),
    )
    const entry = (lessonSlug: string, xp: number) => ({
      studentId: STUDENTS.dev,
      lessonSlug,
      status: 'in_progress' as const,
      xp,
      timeSeconds: 60,
      startedAt: '2026-03-01T10:00:00.000Z',
      completedAt: null,
    })
    const rows = [entry('explorer/e1-robots-follow-instructions', 7), entry('explorer/e2-steps-in-order', 9)]
    clock.advance(1000)
    await upsertProgress(storage.db, rows, clock.now())
    clock.advance(1000)
    await upsertProgress(storage.db, rows, clock.now())
    await deliverer().run()
    const got = receiver.received.filter((r) => r.path === '/progress')
    expect(got).toHaveLength(1)
    const body = JSON.parse(got[0]!.body) as { type: string; data: { profileId: string; progress: { xp: number }[] } }
    expect(body.type).toBe('progress.updated')
    expect(body.data.profileId).toBe(STUDENTS.dev)
    expect(body.data.progress.map((p) => p.xp)).toEqual([7, 9])
    expect(JSON.stringify(body)).not.toMatch(/firstName|displayName/)
  })

  it('reaches only the organisations linked to the student, with an agreement, in the mode of the student', async () => {
    const beta = await createEndpoint(
      storage.db,
      { organisationId: fixtures.orgs.beta, mode: 'live', url: `${base}/beta`, events: ['student.tier_changed'] },
      clock.now(),
    )
    await createEndpoint(
      storage.db,
      { organisationId: fixtures.orgs.beta, mode: 'test', url: `${base}/beta-test`, events: ['student.tier_changed'] },
      clock.now(),
    )
    await createEndpoint(
      storage.db,
      { organisationId: fixtures.orgs.gamma, mode: 'live', url: `${base}/gamma`, events: ['student.tier_changed'] },
      clock.now(),
    )
    await createEndpoint(
      storage.db,
      { organisationId: fixtures.orgs.acme, mode: 'live', url: `${base}/acme-catalog`, events: ['catalog.published'] },
      clock.now(),
    )
    await flip(STUDENTS.ben)
    await flip(STUDENTS.ben)
    await flip(STUDENTS.ada)
    await flip(STUDENTS.ada)
    await deliverer().run()
    const paths = receiver.received.map((r) => r.path).sort()
    // Ben is linked to Acme and Beta; Ada to Acme only; Gamma has no agreement; no sandbox student changed.
    expect(paths.filter((p) => p === '/beta')).toHaveLength(2)
    expect(paths.filter((p) => p === '/acme')).toHaveLength(4)
    expect(paths.some((p) => ['/gamma', '/beta-test', '/acme-catalog'].includes(p))).toBe(false)
    expect((await listDeliveries(storage.db, beta.endpoint.id)).every((d) => d.state === 'delivered')).toBe(true)
  })

  it('retries after a 500 and a timeout on the schedule, with the same webhook-id, until delivered', async () => {
    await flip(STUDENTS.dev)
    await flip(STUDENTS.dev)
    receiver.script = [500, 'hang']
    const run = deliverer(storage, 300)
    // Two events: the first attempt of each fails (500, then a timeout).
    expect(await run.run()).toBe(2)
    expect(await run.run()).toBe(0)
    const pending = await listDeliveries(storage.db, acmeHook.endpoint.id)
    expect(pending.map((d) => [d.state, d.attempts])).toEqual([
      ['pending', 1],
      ['pending', 1],
    ])
    expect(pending.map((d) => d.last_status).sort()).toEqual([500, null])
    expect(pending.some((d) => d.last_error === 'timed out')).toBe(true)
    clock.advance(RETRY_DELAYS_MS[0] - 1)
    expect(await run.run()).toBe(0)
    clock.advance(1)
    expect(await run.run()).toBe(2)
    const done = await listDeliveries(storage.db, acmeHook.endpoint.id)
    expect(done.map((d) => [d.state, d.attempts])).toEqual([
      ['delivered', 2],
      ['delivered', 2],
    ])
    const ids = receiver.received.map((r) => r.headers['webhook-id'])
    expect(new Set(ids).size).toBe(2)
    expect(ids).toHaveLength(4)
  })

  it('gives up after the whole schedule, and disables an endpoint failing for three days', async () => {
    receiver.script = Array(100).fill(500)
    await flip(STUDENTS.ada)
    await flip(STUDENTS.ada)
    const run = deliverer()
    await run.run()
    for (const delay of RETRY_DELAYS_MS) {
      clock.advance(delay)
      await run.run()
    }
    const deliveries = await listDeliveries(storage.db, acmeHook.endpoint.id)
    expect(deliveries.map((d) => [d.state, d.attempts])).toEqual([
      ['failed', RETRY_DELAYS_MS.length + 1],
      ['failed', RETRY_DELAYS_MS.length + 1],
    ])
    let endpoint = await storage.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', acmeHook.endpoint.id)
      .executeTakeFirstOrThrow()
    expect(endpoint.status).toBe('enabled')
    clock.advance(3 * 24 * 3_600_000)
    await flip(STUDENTS.ada)
    await run.run()
    endpoint = await storage.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', acmeHook.endpoint.id)
      .executeTakeFirstOrThrow()
    expect(endpoint.status).toBe('disabled')
    expect(endpoint.disabled_reason).toMatch(/three days/)
    const before = receiver.received.length
    await flip(STUDENTS.ada)
    expect(await run.run()).toBe(0)
    expect(receiver.received.length).toBe(before)
  })

  it('is sent once by one of three instances at a time, and again by another after an instance dies holding it', async () => {
    const others = [openStorage(url), openStorage(url)]
    const instances = [deliverer(), deliverer(others[0]), deliverer(others[1])]
    try {
      for (let i = 0; i < 12; i++) await flip(STUDENTS.ada)
      const pending = await listDeliveries(storage.db, acmeHook.endpoint.id)
      await Promise.all(instances.map((i) => i.run()))
      const ids = receiver.received.map((r) => String(r.headers['webhook-id']))
      expect(ids.sort()).toEqual(pending.map((d) => d.id).sort())

      // An instance claims a delivery and is killed before recording anything.
      await flip(STUDENTS.ada)
      const { due: claimed } = await storage.writes.transaction((trx) =>
        claimDue(trx, { now: clock.now(), leaseMs: leaseMs(2000), slots: 16, perEndpoint: 2, locks: storage.locks }),
      )
      expect(claimed).toHaveLength(1)
      expect(await instances[1]!.run()).toBe(0)
      clock.advance(leaseMs(2000))
      expect(await instances[2]!.run()).toBe(1)
      expect(receiver.received.at(-1)!.headers['webhook-id']).toBe(claimed[0]!.id)
    } finally {
      await Promise.all(instances.map((i) => i.stop()))
      await Promise.all(others.map((s) => s.close()))
    }
  })

  it('logs a host that resolves to an internal address without the address (no DNS oracle)', async () => {
    const internal = await createEndpoint(
      storage.db,
      {
        organisationId: fixtures.orgs.beta,
        mode: 'test',
        url: 'https://build.internal.example/hook',
        events: ['catalog.published'],
      },
      clock.now(),
    )
    await storage.writes.transaction((trx) =>
      announceCatalogPublished(trx, { catalogVersion: 8, tiers: 3, lessons: 30 }, clock.now()),
    )
    const strict = new WebhookDeliverer({
      storage,
      clock,
      log: console as never,
      timeoutMs: 1000,
      allowLoopback: false,
      resolve: async () => [{ address: '10.0.0.5', family: 4 }],
    })
    expect(await strict.run()).toBe(1)
    const [delivery] = await listDeliveries(storage.db, internal.endpoint.id)
    expect(delivery).toMatchObject({
      state: 'pending',
      last_error: 'refused: the host does not resolve to a public address',
    })
    expect(JSON.stringify(delivery)).not.toContain('10.0.0.5')
  })
})
