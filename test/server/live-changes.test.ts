/**
 * Changes the operator makes with the CLI reach a running server within 5 seconds: a key
 * revoked, an organisation suspended, a catalog imported. Real processes, real socket.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cli, jsonOf } from '../cli/cli-harness.js'
import { CATALOG_DIR, tempDir } from '../helper.js'
import { type RunningServer, startServer } from './process.js'

const LIMIT_MS = 5000

async function within(limitMs: number, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now()
  while (Date.now() - started < limitMs) {
    if (await check()) return Date.now() - started
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`not seen within ${limitMs} ms`)
}

describe('operator changes reach a running server', () => {
  const databaseUrl = `sqlite:${path.join(tempDir(), 'live.db')}`
  let server: RunningServer
  let catalogKey: string
  let studentKey: string
  let studentId: string
  const get = (url: string, key: string) =>
    fetch(`${server.baseUrl}${url}`, { headers: { authorization: `Bearer ${key}` } })
  const run = (...args: string[]) => cli([...args, '--json'], { databaseUrl })

  beforeAll(async () => {
    server = await startServer({ DATABASE_URL: databaseUrl, CATALOG_DIR, CHANGE_POLL_MS: '1000' })
    const out = server.output()
    catalogKey = /Demo catalog key[^\n]*\n\s+(cur_live_\w+)/.exec(out)![1]!
    studentKey = /Demo student key[^\n]*\n\s+(cur_live_\w+)/.exec(out)![1]!
    studentId = /Demo student: \w+ \(\w+\), id ([0-9a-f-]{36})/.exec(out)![1]!
  })
  afterAll(async () => {
    await server.stop()
  })

  it('refuses a key revoked with the CLI within 5 s', async () => {
    const created = jsonOf(await run('key', 'create', '--org', 'Demo Partner (demo data)', '--name', 'to revoke'))
    expect((await get('/api/v1/tiers', created.key)).status).toBe(200)
    const revoked = jsonOf(await run('key', 'revoke', created.displayPrefix))
    expect(revoked.ok).toBe(true)
    const elapsed = await within(LIMIT_MS, async () => (await get('/api/v1/tiers', created.key)).status === 401)
    expect(elapsed).toBeLessThan(LIMIT_MS)
    expect(((await (await get('/api/v1/tiers', created.key)).json()) as { code: string }).code).toBe('api_key_revoked')
  })

  it('refuses student data within 5 s of the agreement ending, and serves it again when a new one is recorded', async () => {
    const url = `/api/v1/students/${studentId}/progress`
    expect((await get(url, studentKey)).status).toBe(200)
    expect(jsonOf(await run('agreement', 'end', '--org', 'Demo Partner (demo data)', '--yes')).ok).toBe(true)
    await within(LIMIT_MS, async () => (await get(url, studentKey)).status === 403)
    const today = new Date().toISOString().slice(0, 10)
    expect(
      jsonOf(
        await run(
          'agreement',
          'record',
          '--org',
          'Demo Partner (demo data)',
          '--signed',
          today,
          '--document',
          'DSA-2',
          '--purpose',
          'Demo',
        ),
      ).ok,
    ).toBe(true)
    await within(LIMIT_MS, async () => (await get(url, studentKey)).status === 200)
  })

  it('serves a catalog imported with the CLI within 5 s', async () => {
    const dir = path.join(tempDir(), 'catalog')
    fs.cpSync(CATALOG_DIR, dir, { recursive: true })
    fs.writeFileSync(
      path.join(dir, 'tiers.yaml'),
      fs.readFileSync(path.join(dir, 'tiers.yaml'), 'utf8').replace('label: Explorer', 'label: Explorers'),
    )
    expect(jsonOf(await run('catalog', 'import', dir)).ok).toBe(true)
    await within(LIMIT_MS, async () => {
      const body = (await (await get('/api/v1/tiers', catalogKey)).json()) as { tiers: { label: string }[] }
      return body.tiers[0]!.label === 'Explorers'
    })
  })

  it('refuses every key of a suspended organisation within 5 s, and accepts them again when reinstated', async () => {
    expect(jsonOf(await run('org', 'suspend', 'Demo Partner (demo data)', '--yes')).ok).toBe(true)
    await within(LIMIT_MS, async () => (await get('/api/v1/tiers', catalogKey)).status === 403)
    expect(((await (await get('/api/v1/tiers', catalogKey)).json()) as { code: string }).code).toBe(
      'organisation_suspended',
    )
    expect(jsonOf(await run('org', 'reinstate', 'Demo Partner (demo data)')).ok).toBe(true)
    await within(LIMIT_MS, async () => (await get('/api/v1/tiers', catalogKey)).status === 200)
  })
})
