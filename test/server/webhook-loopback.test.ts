/**
 * WEBHOOK_ALLOW_LOOPBACK is for a developer's own machine: a server started with it says so once,
 * as a warning, however many workers it runs (the first-start test checks that a server without it
 * says nothing of it). Run as a real process.
 */
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { CATALOG_DIR, tempDir } from '../helper.js'
import { REDIS_URL } from '../support/services.js'
import { startServer } from './process.js'

/** Two workers where Redis lets them share their limits; one otherwise. */
const WORKERS = REDIS_URL === '' ? 1 : 2

describe('a server started with WEBHOOK_ALLOW_LOOPBACK=true', () => {
  it(`warns once that loopback endpoints are accepted (${WORKERS} worker(s))`, { timeout: 60_000 }, async () => {
    const server = await startServer({
      DATABASE_URL: `sqlite:${path.join(tempDir(), 'loopback.db')}`,
      CATALOG_DIR,
      SEED_DEMO: 'false',
      WEBHOOK_ALLOW_LOOPBACK: 'true',
      ...(WORKERS === 1 ? {} : { WORKERS: '2', REDIS_URL, REDIS_KEY_PREFIX: `test:loopback:${Date.now()}:` }),
    })
    try {
      const listening = (output: string) => output.match(/Server listening/g)?.length ?? 0
      const output = await server.waitForOutput((text) => listening(text) >= WORKERS)
      const warnings = output
        .split('\n')
        .filter((line) => line.includes('WEBHOOK_ALLOW_LOOPBACK'))
        .map((line) => JSON.parse(line) as { level: number; msg: string })
      expect(warnings).toHaveLength(1)
      expect(warnings[0]).toMatchObject({ level: 40, msg: expect.stringMatching(/never in production/) })
      expect(await server.stop('SIGTERM')).toBe(0)
    } finally {
      server.killAll()
    }
  })
})
