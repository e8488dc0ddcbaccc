/**
 * One partner cannot stall another's webhooks: an endpoint has at most two attempts under way
 * (across instances), slots go in turns across organisations, an endpoint that times out is
 * left alone for a while, an organisation has a capped number of enabled endpoints, and test
 * events and resends are limited per endpoint (across instances).
 */
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ManualClock } from '../../src/clock.js'
import { MANUAL_SENDS, timeoutBackoffMs } from '../../src/domain/webhook-events.js'
import { openStorage, type Storage } from '../../src/storage/connection.js'
import type { WebhookEndpointRow } from '../../src/storage/tables.js'
import { createEndpoint, EndpointLimitError } from '../../src/storage/webhook-endpoint-repository.js'
import { addEndpoint, enableEndpoint, resendDelivery, sendTestEvent } from '../../src/cases/webhook-endpoints.js'
import { listDeliveries } from '../../src/storage/webhook-repository.js'
import { WebhookDeliverer } from '../../src/webhooks/webhook-deliverer.js'
import { createTestStorage, type Fixtures, freshDatabaseUrl, START, seedFixtures } from '../helper.js'
import { clearWebhooks, Receiver } from '../support/webhook-receiver.js'
import { perSuite } from '../support/built.js'

/** How often the server looks for due deliveries (app.ts), besides after every attempt. */
const POLL_MS = 1000

describe('webhook fairness', () => {
  const url = freshDatabaseUrl()
  const storage = perSuite(() => createTestStorage({ url }))
  let fixtures: Fixtures
  const clock = new ManualClock(START)
  const receivers: Receiver[] = []
  const deliverer = (s: Storage, timeoutMs: number) =>
    new WebhookDeliverer({ storage: s, clock, log: console as never, timeoutMs, allowLoopback: true })

  beforeAll(async () => {
    fixtures = await seedFixtures(storage, START)
  })
  beforeEach(async () => {
    await clearWebhooks(storage.db)
  })
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((receiver) => receiver.stop()))
  })

  async function endpointAt(
    organisationId: string,
    script: Receiver['script'] = [],
  ): Promise<[WebhookEndpointRow, Receiver]> {
    const receiver = new Receiver()
    receiver.script = script
    receivers.push(receiver)
    const base = await receiver.start()
    const { endpoint } = await createEndpoint(
      storage.db,
      { organisationId, mode: 'test', url: `${base}/hook`, events: ['catalog.published'] },
      clock.now(),
    )
    return [endpoint, receiver]
  }

  /** `count` test events to the endpoint, within the limit: a minute passes after every ten. */
  async function testEvents(endpoint: WebhookEndpointRow, count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      if (i % MANUAL_SENDS.limit === 0) clock.advance(MANUAL_SENDS.windowMs)
      expect(await sendTestEvent(storage.db, endpoint, clock.now())).toEqual({ outcome: 'queued' })
    }
  }

  const leased = (endpointId: string) =>
    storage.db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('endpoint_id', '=', endpointId)
      .where('lease_until', '>', new Date(clock.now()).toISOString())
      .executeTakeFirstOrThrow()
      .then((row) => Number(row.n))

  it("delays only itself: with 50 test events at a hanging endpoint, another organisation's delivery arrives within 2 s", async () => {
    const [hanging, stalled] = await endpointAt(fixtures.orgs.acme, Array(60).fill('hang'))
    const [other, receiver] = await endpointAt(fixtures.orgs.beta)
    await testEvents(hanging, 50)
    // Attempts time out only after the test is over: what the hanging endpoint holds, it holds.
    const instance = deliverer(storage, 20_000)
    try {
      instance.start(POLL_MS)
      await stalled.arrived(2)
      const queuedAt = performance.now()
      await sendTestEvent(storage.db, other, clock.now())
      let timer: NodeJS.Timeout | undefined
      const late = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('the other delivery did not arrive within 2 s')), 2000)
      })
      await Promise.race([receiver.arrived(1), late]).finally(() => clearTimeout(timer))
      expect(performance.now() - queuedAt).toBeLessThan(2000)
      expect(stalled.mostOpen).toBe(2)
      expect(await leased(hanging.id)).toBe(2)
    } finally {
      await instance.stop()
    }
  })

  it('never has more than 2 attempts under way at one endpoint, with two instances claiming at once', async () => {
    const [hanging, stalled] = await endpointAt(fixtures.orgs.acme, Array(20).fill('hang'))
    await testEvents(hanging, 10)
    const other = openStorage(url)
    const instances = [deliverer(storage, 20_000), deliverer(other, 20_000)]
    try {
      for (let round = 0; round < 3; round++) await Promise.all(instances.map((instance) => instance.claim()))
      expect(await leased(hanging.id)).toBe(2)
      await stalled.arrived(2)
      await Promise.all(instances.map((instance) => instance.claim()))
      expect(stalled.mostOpen).toBe(2)
      expect(stalled.received).toHaveLength(2)
    } finally {
      await Promise.all(instances.map((instance) => instance.stop()))
      await other.close()
    }
  })

  it('leaves an endpoint whose attempts time out alone for a while, and forgets that once it answers', async () => {
    const [slow, receiver] = await endpointAt(fixtures.orgs.acme, ['hang', 'hang'])
    await testEvents(slow, 4)
    const instance = deliverer(storage, 200)
    // Two attempts at once time out; the other two events wait for the back-off to end.
    expect(await instance.run()).toBe(2)
    const backedOff = await storage.db
      .selectFrom('webhook_endpoints')
      .select(['timeouts', 'backoff_until'])
      .where('id', '=', slow.id)
      .executeTakeFirstOrThrow()
    expect(backedOff).toEqual({
      timeouts: 2,
      backoff_until: new Date(clock.now() + timeoutBackoffMs(2, 200)).toISOString(),
    })
    expect(await instance.run()).toBe(0)
    clock.advance(timeoutBackoffMs(2, 200))
    expect(await instance.run()).toBe(2)
    expect(receiver.received).toHaveLength(4)
    const after = await storage.db
      .selectFrom('webhook_endpoints')
      .select(['timeouts', 'backoff_until'])
      .where('id', '=', slow.id)
      .executeTakeFirstOrThrow()
    expect(after).toEqual({ timeouts: 0, backoff_until: null })
  })

  it('caps the enabled endpoints of an organisation, creations at once included; disabled ones do not count', async () => {
    const max = 10
    const spec = (n: number) => ({
      organisationId: fixtures.orgs.gamma,
      mode: 'live' as const,
      url: `https://hooks.example.com/${n}`,
      events: ['catalog.published' as const],
      maxEnabled: max,
    })
    for (let n = 0; n < max - 1; n++) await addEndpoint(storage.db, spec(n), clock.now())
    const other = openStorage(url)
    try {
      const results = await Promise.allSettled(
        Array.from({ length: 6 }, (_, i) =>
          addEndpoint(i % 2 === 0 ? storage.db : other.db, spec(100 + i), clock.now()),
        ),
      )
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
      for (const result of results.filter((r) => r.status === 'rejected')) {
        expect(result.reason).toBeInstanceOf(EndpointLimitError)
      }
    } finally {
      await other.close()
    }
    const endpoints = await storage.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('organisation_id', '=', fixtures.orgs.gamma)
      .execute()
    expect(endpoints).toHaveLength(max)
    await enableEndpoint(storage.db, endpoints[0]!, false, max)
    const { endpoint: replacement } = await addEndpoint(storage.db, spec(200), clock.now())
    await expect(enableEndpoint(storage.db, endpoints[0]!, true, max)).rejects.toBeInstanceOf(EndpointLimitError)
    await enableEndpoint(storage.db, replacement, false, max)
    await enableEndpoint(storage.db, endpoints[0]!, true, max)
  })

  it('limits test events and resends to 10 a minute per endpoint, across instances', async () => {
    const [endpoint] = await endpointAt(fixtures.orgs.acme)
    const [another] = await endpointAt(fixtures.orgs.acme)
    clock.advance(MANUAL_SENDS.windowMs)
    const other = openStorage(url)
    try {
      const results = await Promise.all(
        Array.from({ length: 15 }, (_, i) => sendTestEvent(i % 2 === 0 ? storage.db : other.db, endpoint, clock.now())),
      )
      expect(results.filter((r) => r.outcome === 'queued')).toHaveLength(MANUAL_SENDS.limit)
      for (const result of results.filter((r) => r.outcome === 'limited')) {
        expect(result).toEqual({ outcome: 'limited', retryAfterMs: MANUAL_SENDS.windowMs })
      }
    } finally {
      await other.close()
    }
    const [delivery] = await listDeliveries(storage.db, endpoint.id)
    clock.advance(20_000)
    expect(await resendDelivery(storage.db, delivery!.id, endpoint, clock.now())).toEqual({
      outcome: 'limited',
      retryAfterMs: MANUAL_SENDS.windowMs - 20_000,
    })
    // Another endpoint has its own share.
    expect(await sendTestEvent(storage.db, another, clock.now())).toEqual({ outcome: 'queued' })
    clock.advance(MANUAL_SENDS.windowMs - 20_000)
    expect(await resendDelivery(storage.db, delivery!.id, endpoint, clock.now())).toEqual({ outcome: 'queued' })
    expect(await listDeliveries(storage.db, endpoint.id)).toHaveLength(MANUAL_SENDS.limit)
  })
})
