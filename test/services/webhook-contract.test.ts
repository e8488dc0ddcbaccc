/**
 * Real deliveries of every event the service sends, each caused by the code that causes it in
 * service (an enroll over HTTP, an import, an unlink, an erasure, a published catalog, the
 * dashboard's test button), sent by the app's own deliverer to a receiver on a real socket. Each
 * body and its headers must validate against what the served OpenAPI document's `webhooks`
 * section declares for its event, and each signature must verify by hand as /docs/webhooks
 * describes it, with the chapter's own JavaScript and Python as served, and with the Standard
 * Webhooks library.
 */
import { spawnSync } from 'node:child_process'
import { createHmac, timingSafeEqual } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { publishCatalog } from '../../src/cases/catalog-publishing.js'
import { eraseStudents } from '../../src/cases/erasure.js'
import { unlinkStudent } from '../../src/cases/unlink.js'
import { addEndpoint, sendTestEvent } from '../../src/cases/webhook-endpoints.js'
import { ManualClock } from '../../src/clock.js'
import {
  DISABLE_AFTER_FAILING_MS,
  RETRY_DELAYS_MS,
  SENT_EVENTS,
  WEBHOOK_EVENTS,
} from '../../src/domain/webhook-events.js'
import { SECRET_PREFIX, SIGNATURE_TOLERANCE_SECONDS } from '../../src/domain/webhook-signature.js'
import { DOCS_CSP } from '../../src/http/routes/docs.js'
import { duration } from '../../src/http/webhooks-page.js'
import { upsertProgress } from '../../src/storage/student-import-repository.js'
import { Contract, type Delivery } from '../contract.js'
import {
  bearer,
  createTestStorage,
  listeningApp,
  loadSampleCatalog,
  STUDENTS,
  seedFixtures,
  tempDir,
  testConfig,
} from '../helper.js'
import { perSuite } from '../support/built.js'
import { type Received, Receiver } from '../support/webhook-receiver.js'

/** A delivery as the receiver got it, with one header value per name. */
interface Got extends Delivery {
  headers: Record<string, string>
}

function delivery(received: Received): Got {
  const headers = Object.fromEntries(Object.entries(received.headers).map(([name, value]) => [name, String(value)]))
  return { headers, body: received.body }
}

/** Verification as the chapter's steps say, written again here: key, signed content, HMAC, any `v1,` match, tolerance. */
function verifiedByHand(secret: string, { headers, body }: Delivery, nowSeconds: number): boolean {
  const id = String(headers['webhook-id'])
  const timestamp = String(headers['webhook-timestamp'])
  if (Math.abs(nowSeconds - Number(timestamp)) > SIGNATURE_TOLERANCE_SECONDS) return false
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64')
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest()
  return String(headers['webhook-signature'])
    .split(' ')
    .some((signature) => {
      const given = Buffer.from(signature.slice('v1,'.length), 'base64')
      return signature.startsWith('v1,') && given.length === expected.length && timingSafeEqual(given, expected)
    })
}

/** The code of the chapter's `<pre id="...">`, as a reader copies it. */
function servedCode(page: string, id: string): string {
  const found = new RegExp(`<pre id="${id}"><code>([\\s\\S]*?)</code></pre>`).exec(page)
  expect(found, `the chapter shows ${id}`).not.toBeNull()
  const entities: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" }
  return found![1]!.replace(/&(amp|lt|gt|quot|#39);/g, (entity) => entities[entity]!)
}

/** A copy with one byte of the body changed. */
const tampered = (d: Got): Got => ({ ...d, body: d.body.replace('"data":{', '"data":{ ') })

describe('webhook deliveries against the served OpenAPI document', () => {
  // Near the real time: the chapter's code and the library compare the timestamp with the clock.
  const T0 = Math.floor(Date.now() / 1000) * 1000
  const clock = new ManualClock(T0)
  const storage = perSuite(() => createTestStorage())
  const server = perSuite(() =>
    listeningApp({
      config: testConfig({ WEBHOOK_ALLOW_LOOPBACK: 'true' }),
      storage,
      clock,
      logger: false,
      pollChanges: false,
    }),
  )
  const receiver = new Receiver()
  let secret: string
  let deliveries: Got[]
  let contract: Contract
  let chapter: string

  beforeAll(async () => {
    const base = await receiver.start()
    const fixtures = await seedFixtures(storage, T0)
    const acme = fixtures.orgs.acme
    const added = await addEndpoint(
      storage.db,
      { organisationId: acme, mode: 'live', url: `${base}/hooks`, events: WEBHOOK_EVENTS },
      clock.now(),
    )
    secret = added.secret
    // Each event by its own path: Ada's tier and progress, Ben unlinked, Dev erased, a catalog, the test button.
    const enroll = await server.client.request({
      method: 'POST',
      url: `/api/v1/students/${STUDENTS.ada}/enroll`,
      headers: bearer(fixtures.keys.readWrite),
      payload: { tier: 'builder' },
    })
    expect(enroll.statusCode).toBe(200)
    const lesson = 'explorer/e2-steps-in-order'
    const entry = {
      studentId: STUDENTS.ada,
      lessonSlug: lesson,
      status: 'completed' as const,
      xp: 40,
      timeSeconds: 600,
    }
    const at = new Date(T0).toISOString()
    await upsertProgress(storage.db, [{ ...entry, startedAt: at, completedAt: at }], clock.now())
    await unlinkStudent(storage.db, STUDENTS.ben, acme, clock.now())
    await eraseStudents(storage.db, [STUDENTS.dev], clock.now())
    await storage.writes.transaction((trx) => publishCatalog(trx, loadSampleCatalog(), clock))
    expect(await sendTestEvent(storage.db, added.endpoint, clock.now())).toEqual({ outcome: 'queued' })
    await server.app.services.webhooks.run()
    deliveries = receiver.received.map(delivery)
    contract = new Contract((await server.client.request({ url: '/api/v1/openapi.json' })).json())
    chapter = (await server.client.request({ url: '/docs/webhooks' })).body
  })
  afterAll(() => receiver.stop())

  it('declares exactly the events the service sends', () => {
    expect(Object.keys(contract.doc.webhooks)).toEqual([...SENT_EVENTS])
  })

  it('delivers one of each event, each body and header as the document declares it', () => {
    const events = deliveries.map((d) => contract.checkDelivery(d))
    expect(events.sort()).toEqual([...SENT_EVENTS].sort())
    // Not a validation that passes anything: a field the document does not declare is refused.
    const body = JSON.parse(deliveries[0]!.body)
    const extra = { ...deliveries[0]!, body: JSON.stringify({ ...body, data: { ...body.data, firstName: 'Ada' } }) }
    expect(() => contract.checkDelivery(extra)).toThrow(/must NOT have additional properties/)
  })

  it('signs every delivery as the chapter says: by hand, and with the Standard Webhooks library', () => {
    const now = clock.now() / 1000
    for (const d of deliveries) {
      expect(verifiedByHand(secret, d, now)).toBe(true)
      expect(verifiedByHand(secret, tampered(d), now)).toBe(false)
      expect(verifiedByHand(secret, d, now + SIGNATURE_TOLERANCE_SECONDS + 1)).toBe(false)
      expect(new Webhook(secret).verify(d.body, d.headers)).toEqual(JSON.parse(d.body))
      expect(() => new Webhook(secret).verify(tampered(d).body, d.headers)).toThrow()
    }
  })

  it('serves the chapter as the other /docs pages, with every event, linked from /docs', async () => {
    const page = await server.client.request({ url: '/docs/webhooks' })
    expect(page.statusCode).toBe(200)
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(page.headers['content-security-policy']).toBe(DOCS_CSP)
    expect(chapter).toContain('<link rel="stylesheet" href="/docs/style.css">')
    expect(chapter).not.toMatch(/<script|<(link|img)[^>]+(href|src)="https?:/)
    for (const event of SENT_EVENTS) expect(chapter).toContain(`id="event-${event}"`)
    // The schedule and rules as the deliverer runs them.
    const total = RETRY_DELAYS_MS.reduce((sum, delay) => sum + delay, 0)
    expect(chapter).toContain(`${RETRY_DELAYS_MS.length + 1} attempts over about\n${duration(total)}`)
    expect(chapter).toContain(`failed for ${duration(DISABLE_AFTER_FAILING_MS)}`)
    expect(chapter).toContain('This deployment accepts them')
    expect((await server.client.request({ url: '/docs' })).body).toContain('<a href="/docs/webhooks">')
  })

  it("verifies with the chapter's JavaScript as served", async () => {
    const file = path.join(tempDir(), 'verify-webhook.mjs')
    fs.writeFileSync(file, servedCode(chapter, 'by-hand-js'))
    const { verifyWebhook } = (await import(pathToFileURL(file).href)) as {
      verifyWebhook: (secret: string, headers: Delivery['headers'], body: string) => boolean
    }
    for (const d of deliveries) {
      expect(verifyWebhook(secret, d.headers, d.body)).toBe(true)
      expect(verifyWebhook(secret, d.headers, tampered(d).body)).toBe(false)
      expect(verifyWebhook(`${SECRET_PREFIX}${Buffer.alloc(32).toString('base64')}`, d.headers, d.body)).toBe(false)
    }
  })

  it("verifies with the chapter's Python as served", () => {
    const run = `${servedCode(chapter, 'by-hand-python')}

import json, sys
cases = json.load(sys.stdin)
print(json.dumps([verify_webhook(c["secret"], c["headers"], c["body"].encode()) for c in cases]))
`
    const cases = deliveries.flatMap((d) => [
      { secret, ...d },
      { secret, ...tampered(d) },
    ])
    const result = spawnSync('python3', ['-c', run], { input: JSON.stringify(cases), encoding: 'utf8' })
    expect(result.stderr).toBe('')
    expect(JSON.parse(result.stdout)).toEqual(deliveries.flatMap(() => [true, false]))
  })
})
