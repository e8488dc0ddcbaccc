/**
 * WORKERS=n: one primary migrates once and forks n workers sharing the port; a worker that
 * dies is replaced; SIGTERM stops them all.
 */
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { CATALOG_DIR, tempDir } from '../helper.js'
import { startServer } from '../server/process.js'
import { REDIS_URL } from '../support/services.js'

describe.skipIf(REDIS_URL === '')('WORKERS=2', () => {
  it('serves from two workers, replaces one that dies, and stops on SIGTERM', async () => {
    const server = await startServer({
      DATABASE_URL: `sqlite:${path.join(tempDir(), 'workers.db')}`,
      CATALOG_DIR,
      WORKERS: '2',
      REDIS_URL,
      REDIS_KEY_PREFIX: `test:workers:${Date.now()}:`,
    })
    const listening = () => [...server.output().matchAll(/"pid":(\d+)[^\n]*Server listening/g)].map((m) => Number(m[1]))
    for (let i = 0; i < 50 && listening().length < 2; i++) await new Promise((r) => setTimeout(r, 100))
    const pids = listening()
    expect(new Set(pids).size).toBe(2)
    expect(server.output().match(/DEMO DATA/g)).toHaveLength(1)
    const key = /Demo catalog key[^\n]*\n\s+(cur_live_\w+)/.exec(server.output())![1]!
    const statuses = await Promise.all(Array.from({ length: 20 }, () => fetch(`${server.baseUrl}/api/v1/tiers`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status)))
    expect(statuses.every((status) => status === 200)).toBe(true)

    process.kill(pids[0]!, 'SIGKILL')
    for (let i = 0; i < 50 && listening().length < 3; i++) await new Promise((r) => setTimeout(r, 100))
    expect(listening()).toHaveLength(3)
    expect((await fetch(`${server.baseUrl}/api/v1/tiers`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200)

    expect(await server.stop('SIGTERM')).toBe(0)
  })
})
