/**
 * `npm start` on an empty database: migrate, seed the demo, print demo keys once; later
 * starts leave the data alone; the database's files are the service's user's alone, and a
 * start names those that are not. Run as a real process on a real socket.
 */
import fs from 'node:fs'
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
    // Loopback webhook endpoints are off unless asked for (webhook-loopback.test.ts), and nothing is said of them.
    expect(out).not.toContain('WEBHOOK_ALLOW_LOOPBACK')
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

  /** The files of the database, with their permission bits. */
  const modes = (file: string) =>
    Object.fromEntries([file, `${file}-wal`, `${file}-shm`].map((name) => [name, fs.statSync(name).mode & 0o777]))
  /** Starts the server with the umask most systems give (0022), under which files are born 0644. */
  const startWithUsualUmask = (env: Record<string, string>) => {
    const previous = process.umask(0o022)
    try {
      return startServer(env)
    } finally {
      process.umask(previous)
    }
  }

  it("creates the database, its -wal and its -shm readable by the service's user alone", async () => {
    const file = path.join(tempDir(), 'private.db')
    server = await startWithUsualUmask({ DATABASE_URL: `sqlite:${file}`, CATALOG_DIR })
    expect(modes(file)).toEqual({ [file]: 0o600, [`${file}-wal`]: 0o600, [`${file}-shm`]: 0o600 })
    expect(server.output()).not.toContain('readable or writable by other users')
  })

  it('names at start the database files other users can read, and the chmod that closes them', async () => {
    const file = path.join(tempDir(), 'open.db')
    const env = { DATABASE_URL: `sqlite:${file}`, CATALOG_DIR, SEED_DEMO: 'false' }
    server = await startWithUsualUmask(env)
    expect(await server.stop('SIGTERM')).toBe(0)
    // As the files of a database made by an earlier version were: 0644.
    for (const name of [file, `${file}-wal`, `${file}-shm`]) fs.chmodSync(name, 0o644)
    server = await startWithUsualUmask(env)
    const files = `${file}, ${file}-wal, ${file}-shm`
    expect(server.output()).toContain(`database files readable or writable by other users: ${files}`)
    expect(server.output()).toContain(`chmod 600 ${file} ${file}-wal ${file}-shm`)
    expect(server.output()).toMatch(/"level":40[^\n]*readable or writable by other users/)
  })

  it('refuses a bad configuration with a clear message', async () => {
    await expect(
      startServer({ PORT: 'eighty', DATABASE_URL: `sqlite:${path.join(tempDir(), 'x.db')}` }, 5000),
    ).rejects.toThrow(/PORT must be an integer from 0 to 65535 \(got "eighty"\)/)
  })
})
