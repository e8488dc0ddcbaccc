/**
 * The service's own spans, with a recording tracer installed as the server installs
 * OpenTelemetry's: storage opened after it wraps its request-time writes, and a webhook
 * delivery is one span naming its outcome. Without a tracer (every other test file, each with
 * its own modules) nothing is wrapped.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ManualClock } from '../../src/clock.js'
import { installSpans, type SpanAttributes, type Spans } from '../../src/instrumentation/spans.js'
import type { Storage } from '../../src/storage/connection.js'
import { enrollStudent } from '../../src/cases/enroll.js'
import { createEndpoint } from '../../src/storage/webhook-endpoint-repository.js'
import { WebhookDeliverer } from '../../src/webhooks/webhook-deliverer.js'
import { createTestStorage, type Fixtures, freshDatabaseUrl, STUDENTS, seedFixtures } from '../helper.js'
import { Receiver } from '../support/webhook-receiver.js'

interface Recorded {
  name: string
  attributes: SpanAttributes
  ended: boolean
}

const recorded: Recorded[] = []
const recording: Spans = {
  run(name, attributes, work) {
    const span: Recorded = { name, attributes: { ...attributes }, ended: false }
    recorded.push(span)
    const result = work({ set: (key, value) => (span.attributes[key] = value) })
    if (result instanceof Promise) return result.finally(() => (span.ended = true)) as typeof result
    span.ended = true
    return result
  },
  shutdown: async () => {},
}

describe('own spans', () => {
  const T0 = Math.floor(Date.now() / 1000) * 1000
  const clock = new ManualClock(T0)
  let storage: Storage
  let fixtures: Fixtures
  const receiver = new Receiver()

  beforeAll(async () => {
    installSpans(recording)
    storage = await createTestStorage({ url: freshDatabaseUrl() })
    fixtures = await seedFixtures(storage, T0)
  })
  afterAll(async () => {
    // Were this file's modules shared with another's, that one would start untraced again.
    installSpans(undefined)
    await receiver.stop()
    await storage.close()
  })

  const enroll = (tier: 'explorer' | 'builder') => {
    clock.advance(1000)
    const access = {
      at: clock.now(),
      requestId: 'req-traced',
      keyId: fixtures.keyIds.write,
      organisationId: fixtures.orgs.acme,
      sandbox: false,
    }
    return enrollStudent(storage.writes, STUDENTS.ada, tier, access, clock.now())
  }

  it('puts each request-time write in a storage span that ends when it is committed', async () => {
    recorded.length = 0
    await enroll('builder')
    const writes = recorded.filter((span) => span.name.startsWith('storage.'))
    expect(writes.length).toBeGreaterThan(0)
    expect(writes.every((span) => span.ended)).toBe(true)
    const system = storage.engine === 'sqlite' ? 'sqlite' : 'postgresql'
    expect(writes.every((span) => span.attributes['db.system.name'] === system)).toBe(true)
  })

  it('puts each webhook delivery in a span of its own, with its outcome and status', async () => {
    const base = await receiver.start()
    await createEndpoint(
      storage.db,
      { organisationId: fixtures.orgs.acme, mode: 'live', url: `${base}/acme`, events: ['student.tier_changed'] },
      clock.now(),
    )
    if (!(await enroll('explorer'))!.changed) await enroll('builder')
    recorded.length = 0
    const deliverer = new WebhookDeliverer({
      storage,
      clock,
      log: console as never,
      timeoutMs: 2000,
      allowLoopback: true,
    })
    expect(await deliverer.run()).toBe(1)
    const deliveries = recorded.filter((span) => span.name === 'webhook.delivery')
    expect(deliveries).toHaveLength(1)
    expect(deliveries[0]!.attributes).toMatchObject({
      'webhook.outcome': 'delivered',
      'http.response.status_code': 200,
    })
    expect(deliveries[0]!.attributes['webhook.id']).toMatch(/^msg_/)
    expect(deliveries[0]!.ended).toBe(true)
  })
})
