import { describe, expect, it } from 'vitest'
import { ManualClock } from '../../src/clock.js'
import { generateApiKey, hashApiKey } from '../../src/domain/api-key.js'
import { scopesIn } from '../../src/domain/scopes.js'
import { KeyCache } from '../../src/services/key-cache.js'
import { createApiKey, createOrganisation, listApiKeys, revokeApiKey } from '../../src/storage/access-repository.js'
import { bearer, buildTestApp, createTestStorage, listeningOnHangingStorage } from '../helper.js'
import { perSuite } from '../support/built.js'

describe('key cache and change watcher', () => {
  const t = perSuite(() => buildTestApp({ env: { RATE_LIMIT: '100000', ORGANISATION_RATE_LIMIT: '100000' } }))

  it('sees a key revoked by another process on the next poll, and a new key at once', async () => {
    const key = await createApiKey(
      t.storage.db,
      { organisationId: t.fixtures.orgs.acme, name: 'fresh', scopes: [], expiresAt: null },
      t.clock.now(),
    )
    // Created after the app cached nothing about it: works at once (unknown keys are looked up).
    expect((await t.call({ url: '/api/v1/tiers', headers: bearer(key.key) })).statusCode).toBe(200)
    await revokeApiKey(t.storage.db, key.row.id, t.clock.now())
    // Cached as valid until the watcher sees the access version move.
    expect((await t.call({ url: '/api/v1/tiers', headers: bearer(key.key) })).statusCode).toBe(200)
    await t.app.services.changes.check()
    const refused = await t.call({ url: '/api/v1/tiers', headers: bearer(key.key) })
    expect(refused.statusCode).toBe(401)
    expect(refused.json().code).toBe('api_key_revoked')
  })

  it('remembers unknown keys apart from known ones, for a few seconds', async () => {
    const known = t.app.services.keys.size
    const unknown = t.app.services.keys.unknownSize
    await t.call({ url: '/api/v1/tiers', headers: bearer(generateApiKey().key) })
    expect(t.app.services.keys.size).toBe(known)
    expect(t.app.services.keys.unknownSize).toBe(unknown + 1)
    await createOrganisation(t.storage.db, 'Another Partner', t.clock.now())
    await t.app.services.changes.check()
    expect(t.app.services.keys.size).toBe(known) // a new organisation concerns no cached key
  })

  it('keeps what keys of one organisation have in common once, and the rest per key', async () => {
    const keys = new KeyCache({ db: t.storage.db, clock: t.clock })
    const first = await keys.lookup(hashApiKey(t.fixtures.keys.read))
    const second = await keys.lookup(hashApiKey(t.fixtures.keys.readWrite))
    expect(first!.organisation).toBe(second!.organisation)
    expect(first!.keyId).not.toBe(second!.keyId)
    expect(first!.organisation.agreements.length).toBeGreaterThan(0)
    expect(scopesIn(first!.scopes)).toEqual(['students:read'])
    expect(scopesIn(second!.scopes)).toEqual(['students:read', 'students:write'])
  })

  it('records when keys were last used, in batches', async () => {
    await t.call({ url: '/api/v1/tiers', headers: bearer(t.fixtures.keys.read) })
    const unflushed = (await listApiKeys(t.storage.db)).find((k) => k.id === t.fixtures.keyIds.read)!
    expect(unflushed.last_used_at).toBeNull()
    await t.app.services.usage.flush()
    const flushed = (await listApiKeys(t.storage.db)).find((k) => k.id === t.fixtures.keyIds.read)!
    expect(flushed.last_used_at).toBe(new Date(t.clock.now()).toISOString())
  })
})

describe('readiness', () => {
  it('answers 503 problem+json with Retry-After when storage does not answer', async () => {
    const server = await listeningOnHangingStorage()
    try {
      const res = await server.client.request({ url: '/readyz' })
      expect(res.statusCode).toBe(503)
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
      expect(res.headers['retry-after']).toBe('2')
      expect(res.json().code).toBe('storage_unavailable')
    } finally {
      await server.close()
    }
  })
})

describe('key usage', () => {
  it('counts requests and 429s per key per UTC day, and writes last-used times at most every five minutes', async () => {
    const { KeyUsage, LAST_USED_PRECISION_MS } = await import('../../src/services/key-usage.js')
    const { usageOf } = await import('../../src/storage/usage-repository.js')
    const storage = await createTestStorage()
    const clock = new ManualClock('2026-03-02T23:59:00.000Z')
    const fixtures = await (await import('../helper.js')).seedFixtures(storage, clock.now())
    const usage = new KeyUsage(storage, clock)
    const key = fixtures.keyIds.catalog
    usage.count(key, false)
    usage.count(key, true)
    clock.advance(2 * 60_000) // past midnight UTC
    usage.count(key, false)
    await usage.flush()
    expect(await usageOf(storage.db, [key], '2026-03-01')).toEqual([
      { keyId: key, day: '2026-03-02', requests: 2, throttled: 1 },
      { keyId: key, day: '2026-03-03', requests: 1, throttled: 0 },
    ])
    const lastUsed = async () => (await listApiKeys(storage.db)).find((k) => k.id === key)!.last_used_at
    expect(await lastUsed()).toBe('2026-03-03T00:01:00.000Z')
    clock.advance(LAST_USED_PRECISION_MS - 1)
    usage.count(key, false)
    await usage.flush()
    expect(await lastUsed()).toBe('2026-03-03T00:01:00.000Z')
    clock.advance(1)
    usage.count(key, false)
    await usage.flush()
    expect(await lastUsed()).toBe(new Date(clock.now()).toISOString())
    expect((await usageOf(storage.db, [key], '2026-03-03'))[0]!.requests).toBe(3)
    await storage.close()
  })
})
