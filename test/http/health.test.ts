/**
 * Health for load balancers: /livez (and /healthz) answer while the process runs, whatever
 * storage does; /readyz answers 200 only when storage answers and the database lists exactly the
 * migrations the code knows, and names the rate-limit store; otherwise 503 problem+json whose
 * `checks` names the failing check. Over a real socket, on this run's request path and engine.
 */
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { ManualClock } from '../../src/clock.js'
import { knownMigrations } from '../../src/storage/migrate.js'
import type { Storage } from '../../src/storage/connection.js'
import {
  bearer,
  buildTestApp,
  createTestStorage,
  listeningApp,
  listeningOnHangingStorage,
  seedFixtures,
  START,
  testConfig,
} from '../helper.js'
import { freePort } from '../support/services.js'
import { perSuite } from '../support/built.js'

/** The migration table of `storage`, in its schema on PostgreSQL. */
function migrationTable(storage: Storage) {
  return sql.table(storage.schema === undefined ? 'kysely_migration' : `${storage.schema}.kysely_migration`)
}

describe('health endpoints', () => {
  const t = perSuite(() => buildTestApp())

  it('answers liveness on /livez and /healthz alike, without a key', async () => {
    for (const url of ['/livez', '/healthz']) {
      const res = await t.call({ url })
      expect(res.statusCode, url).toBe(200)
      expect(res.json(), url).toEqual({ status: 'ok' })
    }
  })

  it('is ready when storage answers and every migration the code knows is applied, and names the limiter store', async () => {
    const res = await t.call({ url: '/readyz' })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({
      status: 'ready',
      storage: { engine: t.storage.engine, status: 'up' },
      migrations: { status: 'current', applied: knownMigrations().length },
      rateLimit: { store: 'memory' },
      catalogVersion: expect.any(Number),
    })
  })

  it('is not ready while a migration the code knows is missing from the database, and says which', async () => {
    const [name] = knownMigrations().slice(-1)
    const table = migrationTable(t.storage)
    const { rows } = await sql<{ timestamp: string }>`select timestamp from ${table} where name = ${name}`.execute(
      t.storage.db,
    )
    await sql`delete from ${table} where name = ${name}`.execute(t.storage.db)
    try {
      const res = await t.call({ url: '/readyz' })
      expect(res.statusCode).toBe(503)
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
      expect(res.headers['retry-after']).toBe('2')
      const body = res.json()
      expect(body).toMatchObject({
        code: 'not_ready',
        status: 503,
        checks: { storage: 'up', migrations: 'pending', rateLimit: 'memory' },
      })
      expect(body.detail).toContain(name)
      expect(body.detail).toContain('curriculum migrate')
      // Liveness does not depend on it: the instance must not be restarted for it.
      expect((await t.call({ url: '/livez' })).statusCode).toBe(200)
    } finally {
      await sql`insert into ${table} (name, timestamp) values (${name}, ${rows[0]!.timestamp})`.execute(t.storage.db)
    }
    expect((await t.call({ url: '/readyz' })).statusCode).toBe(200)
  })

  it('is not ready on a database a newer version migrated, and names the unknown migration', async () => {
    const table = migrationTable(t.storage)
    const future = '9999-from-a-newer-version'
    await sql`insert into ${table} (name, timestamp) values (${future}, ${new Date().toISOString()})`.execute(
      t.storage.db,
    )
    try {
      const res = await t.call({ url: '/readyz' })
      expect(res.statusCode).toBe(503)
      const body = res.json()
      expect(body).toMatchObject({ code: 'not_ready', checks: { storage: 'up', migrations: 'newer' } })
      expect(body.detail).toContain(future)
      expect(body.detail).toMatch(/Upgrade this instance, or restore a backup/)
    } finally {
      await sql`delete from ${table} where name = ${future}`.execute(t.storage.db)
    }
    expect((await t.call({ url: '/readyz' })).statusCode).toBe(200)
  })
})

describe('health when storage does not answer', () => {
  it('stays live, and answers readiness 503 storage_unavailable with the storage check down', async () => {
    const server = await listeningOnHangingStorage({ pollChanges: false })
    try {
      expect((await server.client.request({ url: '/livez' })).statusCode).toBe(200)
      const ready = await server.client.request({ url: '/readyz' })
      expect(ready.statusCode).toBe(503)
      expect(ready.json()).toMatchObject({
        code: 'storage_unavailable',
        checks: { storage: 'down', migrations: 'unchecked', rateLimit: 'memory' },
      })
    } finally {
      await server.close()
    }
  })
})

describe('health with Redis unreachable', () => {
  it('stays ready on the in-memory fallback, and says so', async () => {
    const storage = await createTestStorage()
    const clock = new ManualClock(START)
    const fixtures = await seedFixtures(storage, clock.now())
    // Nothing listens there.
    const server = await listeningApp({
      config: testConfig({ REDIS_URL: `redis://127.0.0.1:${await freePort()}`, REDIS_COMMAND_TIMEOUT_MS: '200' }),
      storage,
      clock,
      logger: false,
      pollChanges: false,
    })
    try {
      // Before any request has found Redis away: readiness asks it.
      const ready = await server.client.request({ url: '/readyz' })
      expect(ready.statusCode).toBe(200)
      expect(ready.json()).toMatchObject({ status: 'ready', rateLimit: { store: 'memory-fallback' } })
      const tiers = await server.client.request({ url: '/api/v1/tiers', headers: bearer(fixtures.keys.catalog) })
      expect(tiers.statusCode).toBe(200)
    } finally {
      await server.close()
      await storage.close()
    }
  })
})
