/**
 * `npm start` on an empty database: migrate, seed the demo, print demo keys once; later
 * starts leave the data alone. Run as a real process on a real socket.
 */
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { CATALOG_DIR, tempDir } from '../helper.js'
import { type RunningServer, startServer } from './process.js'

describe('the server process', () => {
  let server: RunningServer | undefined
  afterEach(async () => {
    await server?.stop('SIGKILL')
    server = undefined
  })

  it('seeds the demo on first start only, and closes cleanly on SIGTERM', async () => {
    const env = { DATABASE_URL: `sqlite:${path.join(tempDir(), 'demo.db')}`, CATALOG_DIR }
    server = await startServer(env)
    const out = server.output()
    expect(out).toContain('DEMO DATA')
    expect(out).toMatch(/Dashboard: http:\/\/localhost:\d+\/dashboard/)
    expect(out).toMatch(/Demo operator login: operator@demo\.example/)
    const catalogKey = /Demo catalog key[^\n]*\n\s+(cur_live_\w+)/.exec(out)?.[1]
    const studentKey = /Demo student key[^\n]*\n\s+(cur_live_\w+)/.exec(out)?.[1]
    const studentId = /Demo student: \w+ \(\w+\), id ([0-9a-f-]{36})/.exec(out)?.[1]
    expect(catalogKey).toBeDefined()
    expect(studentKey).toBeDefined()
    const get = (url: string, key: string) =>
      fetch(`${server!.baseUrl}${url}`, { headers: { authorization: `Bearer ${key}` } })

    const tiers = await get('/api/v1/tiers', catalogKey!)
    expect(tiers.status).toBe(200)
    expect(((await tiers.json()) as { tiers: unknown[] }).tiers).toHaveLength(3)
    const progress = await get(`/api/v1/students/${studentId}/progress`, studentKey!)
    expect(progress.status).toBe(200)
    expect(((await progress.json()) as { displayName: string }).displayName).toMatch(/^\w+$/)
    expect((await get(`/api/v1/students/${studentId}/progress`, catalogKey!)).status).toBe(403)

    expect(await server.stop('SIGTERM')).toBe(0)

    server = await startServer(env)
    expect(server.output()).not.toContain('DEMO DATA')
    expect(server.output()).toContain('fast path on: hot requests are answered before the router')
    // The first start's data is still there: its keys still work.
    expect((await get('/api/v1/tiers', catalogKey!)).status).toBe(200)
    expect((await get(`/api/v1/students/${studentId}/progress`, studentKey!)).status).toBe(200)
  })

  it('refuses a bad configuration with a clear message', async () => {
    await expect(
      startServer({ PORT: 'eighty', DATABASE_URL: `sqlite:${path.join(tempDir(), 'x.db')}` }, 5000),
    ).rejects.toThrow(/PORT must be an integer from 0 to 65535 \(got "eighty"\)/)
  })
})
