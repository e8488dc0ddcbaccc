/**
 * PostgreSQL goes away under a running service (through a proxy the test cuts, never the
 * shared server): student endpoints answer 503 problem+json with Retry-After within a bounded
 * time, catalog requests from keys already known keep being served from memory, and everything
 * recovers by itself when the database returns.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import type { TypedApp } from '../../src/http/app-types.js'
import { createApiKey } from '../../src/storage/access-repository.js'
import { openStorage, type Storage } from '../../src/storage/connection.js'
import {
  bearer,
  createTestStorage,
  type Fixtures,
  freshDatabaseUrl,
  seedFixtures,
  STUDENTS,
  testConfig,
} from '../helper.js'
import { POSTGRES_URL } from '../support/services.js'
import { TcpProxy } from '../support/tcp-proxy.js'

const TIMEOUT_MS = 1000

describe.skipIf(POSTGRES_URL === '')('PostgreSQL outage', () => {
  let proxy: TcpProxy
  let setup: Storage
  let storage: Storage
  let app: TypedApp
  let fixtures: Fixtures

  beforeAll(async () => {
    const url = freshDatabaseUrl(POSTGRES_URL)
    setup = await createTestStorage({ url })
    fixtures = await seedFixtures(setup, Date.now())
    const direct = new URL(url)
    proxy = new TcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) })
    await proxy.start()
    const viaProxy = new URL(url)
    viaProxy.port = String(proxy.port)
    storage = openStorage(viaProxy.toString(), { timeoutMs: TIMEOUT_MS, poolSize: 4 })
    app = await buildApp({
      config: testConfig({
        STORAGE_TIMEOUT_MS: String(TIMEOUT_MS),
        RATE_LIMIT: '100000',
        ORGANISATION_RATE_LIMIT: '100000',
      }),
      storage,
      logger: false,
    })
  })
  afterAll(async () => {
    await proxy.restore()
    await app.close()
    await storage.close()
    await setup.close()
  })

  const progress = () =>
    app.inject({ url: `/api/v1/students/${STUDENTS.ada}/progress`, headers: bearer(fixtures.keys.readWrite) })
  const enroll = () =>
    app.inject({
      method: 'POST',
      url: `/api/v1/students/${STUDENTS.ada}/enroll`,
      headers: bearer(fixtures.keys.readWrite),
      payload: { tier: 'builder' },
    })
  const tiers = (key: string) => app.inject({ url: '/api/v1/tiers', headers: bearer(key) })

  async function expectUnavailable(
    response: Promise<{ statusCode: number; headers: Record<string, unknown>; json(): { code: string } }>,
  ) {
    const started = Date.now()
    const res = await response
    const elapsed = Date.now() - started
    expect(res.statusCode).toBe(503)
    expect(res.json().code).toBe('storage_unavailable')
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0)
    // Bounded: the pool's connection timeout or the query timeout, plus a little.
    expect(elapsed).toBeLessThan(TIMEOUT_MS * 2 + 1000)
  }

  it('serves normally through the proxy, warming the key cache', async () => {
    expect((await progress()).statusCode).toBe(200)
    expect((await tiers(fixtures.keys.catalog)).statusCode).toBe(200)
  })

  it('keeps serving known keys when the database goes just after a key was created elsewhere', async () => {
    // Another instance (here: the setup connection) creates a key, and this one polls for changes.
    await createApiKey(
      setup.db,
      { organisationId: fixtures.orgs.beta, name: 'new elsewhere', scopes: [], expiresAt: null },
      Date.now(),
    )
    await app.services.changes.check()
    await proxy.cut()
    try {
      // A creation evicts nothing, so these are still answered from memory rather than 503.
      expect((await tiers(fixtures.keys.catalog)).statusCode).toBe(200)
      expect((await tiers(fixtures.keys.readWrite)).statusCode).toBe(200)
    } finally {
      await proxy.restore()
    }
  })

  it('answers 503 for student data, and serves the catalog to known keys, while the database is gone', async () => {
    await proxy.cut()
    await expectUnavailable(progress())
    await expectUnavailable(enroll())
    expect((await tiers(fixtures.keys.catalog)).statusCode).toBe(200)
    expect((await tiers(fixtures.keys.readWrite)).statusCode).toBe(200)
    // A key never seen cannot be checked: 503, not 401.
    const unknown = await tiers(fixtures.keys.read)
    expect(unknown.statusCode).toBe(503)
    const ready = await app.inject({ url: '/readyz' })
    expect(ready.statusCode).toBe(503)
  })

  it('recovers by itself when the database returns', async () => {
    await proxy.restore()
    const started = Date.now()
    let status = 0
    while (Date.now() - started < 10_000) {
      status = (await progress()).statusCode
      if (status === 200) break
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    expect(status).toBe(200)
    expect((await app.inject({ url: '/readyz' })).statusCode).toBe(200)
    expect((await tiers(fixtures.keys.read)).statusCode).toBe(200)
  })

  it('answers 503 within the bound when the database hangs instead of refusing', async () => {
    proxy.hang()
    await expectUnavailable(progress())
    expect((await tiers(fixtures.keys.catalog)).statusCode).toBe(200)
    await proxy.restore()
    const started = Date.now()
    let status = 0
    while (Date.now() - started < 15_000) {
      status = (await progress()).statusCode
      if (status === 200) break
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    expect(status).toBe(200)
  })
})
