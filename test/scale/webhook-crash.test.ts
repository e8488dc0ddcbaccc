/**
 * A webhook delivery survives a kill -9 of the instance sending it: another instance sends it
 * again, with the same webhook-id, once the dead one's lease ends.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, describe, expect, it } from 'vitest'
import { openStorage } from '../../src/storage/connection.js'
import { enrollStudent } from '../../src/cases/enroll.js'
import { createEndpoint } from '../../src/storage/webhook-endpoint-repository.js'
import { listDeliveries } from '../../src/storage/webhook-repository.js'
import { leaseMs } from '../../src/webhooks/webhook-deliverer.js'
import { createTestStorage, freshDatabaseUrl, seedFixtures, STUDENTS } from '../helper.js'
import { type RunningServer, startServer } from '../server/process.js'

const TIMEOUT_MS = 1000

describe('webhook deliveries and kill -9', () => {
  const servers: RunningServer[] = []
  afterAll(() => {
    for (const server of servers) server.killAll()
  })

  it('are sent again by the next instance when the sending one is killed mid-delivery', async () => {
    const url = freshDatabaseUrl('')
    const setup = await createTestStorage({ url })
    const now = Date.now()
    const fixtures = await seedFixtures(setup, now)
    const arrivals: string[] = []
    let answer: ((status: number) => void) | undefined
    const arrived: (() => void)[] = []
    const receiver = http.createServer((req, res) => {
      req.resume()
      arrivals.push(String(req.headers['webhook-id']))
      arrived.shift()?.()
      // The first attempt is left hanging, as a receiver that is slow when the sender dies.
      if (arrivals.length === 1) answer = (status) => res.writeHead(status).end()
      else res.writeHead(200).end('ok')
    })
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
    const nextArrival = () => new Promise<void>((resolve) => arrived.push(resolve))
    try {
      const { endpoint } = await createEndpoint(
        setup.db,
        {
          organisationId: fixtures.orgs.acme,
          mode: 'live',
          url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
          events: ['student.tier_changed'],
        },
        now,
      )
      const access = {
        at: now,
        requestId: 'req-1',
        keyId: fixtures.keyIds.write,
        organisationId: fixtures.orgs.acme,
        sandbox: false,
      }
      let changed = await enrollStudent(setup.writes, STUDENTS.ada, 'builder', access, now)
      if (!changed?.changed) changed = await enrollStudent(setup.writes, STUDENTS.ada, 'explorer', access, now)
      expect(changed?.changed).toBe(true)
      await setup.close()

      const env = {
        DATABASE_URL: url,
        SEED_DEMO: 'false',
        WEBHOOK_ALLOW_LOOPBACK: 'true',
        WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      }
      const first = nextArrival()
      const sender = await startServer(env)
      servers.push(sender)
      await first
      sender.killAll()
      await new Promise((resolve) => sender.child.once('exit', resolve))
      const killedAt = Date.now()

      const second = nextArrival()
      servers.push(await startServer(env))
      await second
      // Not before the dead instance's lease ended.
      expect(Date.now() - killedAt).toBeGreaterThanOrEqual(leaseMs(TIMEOUT_MS) - 2 * TIMEOUT_MS - 1000)
      expect(arrivals).toHaveLength(2)
      expect(arrivals[1]).toBe(arrivals[0])
      answer?.(200)

      const check = openStorage(url)
      try {
        // The instance records the answer right after it arrives.
        for (let i = 0; i < 50; i++) {
          const [delivery] = await listDeliveries(check.db, endpoint.id)
          if (delivery?.state === 'delivered') break
          await new Promise((resolve) => setTimeout(resolve, 100))
        }
        const [delivery] = await listDeliveries(check.db, endpoint.id)
        expect(delivery).toMatchObject({ state: 'delivered', attempts: 1, id: arrivals[0] })
      } finally {
        await check.close()
      }
    } finally {
      receiver.closeAllConnections()
      receiver.close()
    }
  }, 60_000)
})
