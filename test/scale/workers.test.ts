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
  it('serves from two workers, replaces one that dies, and stops on SIGTERM', { timeout: 120_000 }, async () => {
    const server = await startServer({
      DATABASE_URL: `sqlite:${path.join(tempDir(), 'workers.db')}`,
      CATALOG_DIR,
      WORKERS: '2',
      REDIS_URL,
      REDIS_KEY_PREFIX: `test:workers:${Date.now()}:`,
    })
    try {
      const listening = (output: string) =>
        [...output.matchAll(/"pid":(\d+)[^\n]*Server listening/g)].map((m) => Number(m[1]))
      // Waits on the workers' own lines, however long a loaded machine takes to print them.
      const pids = listening(await server.waitForOutput((output) => listening(output).length >= 2))
      expect(new Set(pids).size).toBe(2)
      expect(server.output().match(/DEMO DATA/g)).toHaveLength(1)
      const key = /Demo catalog key[^\n]*\n\s+(cur_live_\w+)/.exec(server.output())![1]!
      const statuses = await Promise.all(
        Array.from({ length: 20 }, () =>
          fetch(`${server.baseUrl}/api/v1/tiers`, { headers: { authorization: `Bearer ${key}` } }).then(
            (r) => r.status,
          ),
        ),
      )
      expect(statuses.every((status) => status === 200)).toBe(true)

      process.kill(pids[0]!, 'SIGKILL')
      expect(listening(await server.waitForOutput((output) => listening(output).length >= 3))).toHaveLength(3)
      expect(
        (await fetch(`${server.baseUrl}/api/v1/tiers`, { headers: { authorization: `Bearer ${key}` } })).status,
      ).toBe(200)

      expect(await server.stop('SIGTERM')).toBe(0)
    } finally {
      server.killAll()
    }
  })
})
