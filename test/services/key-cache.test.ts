/**
 * The key cache forgets only what a change concerns. Changes are made straight in storage, as
 * the CLI or another instance would, and `changes.check()` stands for the next poll. The
 * storage lookup counter tells a cache hit from a miss.
 */
import { describe, expect, it } from 'vitest'
import { generateApiKey, hashApiKey } from '../../src/domain/api-key.js'
import { KeyCache } from '../../src/services/key-cache.js'
import { createApiKey, revokeApiKey, setOrganisationStatus } from '../../src/storage/access-repository.js'
import { endAgreements } from '../../src/cases/agreement-end.js'
import { recordAgreement } from '../../src/cases/agreement-record.js'
import { bumpVersion } from '../../src/storage/meta-repository.js'
import { bearer, buildTestApp, STUDENTS } from '../helper.js'
import { perTest } from '../support/built.js'

describe('key cache eviction', () => {
  const t = perTest(() => buildTestApp({ env: { RATE_LIMIT: '100000', ORGANISATION_RATE_LIMIT: '100000' } }))

  const tiers = (key: string) => t.call({ url: '/api/v1/tiers', headers: bearer(key) })
  const lookups = () => t.app.services.keys.storageLookups
  async function warm(...keys: string[]): Promise<void> {
    for (const key of keys) expect((await tiers(key)).statusCode).toBe(200)
  }
  /** Asserts every key is answered 200 from the cache, without a storage lookup. */
  async function servedFromCache(...keys: string[]): Promise<void> {
    const before = lookups()
    for (const key of keys) expect((await tiers(key)).statusCode).toBe(200)
    expect(lookups()).toBe(before)
  }

  it('evicts nothing when a key is created elsewhere; the new key works at once', async () => {
    const { catalog, read, otherOrg } = t.fixtures.keys
    await warm(catalog, read, otherOrg)
    const cached = t.app.services.keys.size
    const created = await createApiKey(
      t.storage.db,
      { organisationId: t.fixtures.orgs.acme, name: 'new', scopes: [], expiresAt: null },
      t.clock.now(),
    )
    await t.app.services.changes.check()
    expect(t.app.services.keys.size).toBe(cached)
    await servedFromCache(catalog, read, otherOrg)
    const before = lookups()
    expect((await tiers(created.key)).statusCode).toBe(200)
    expect(lookups()).toBe(before + 1)
  })

  it('refuses a mistyped key (wrong checksum) without a storage lookup, and still serves the real one from the cache', async () => {
    const { catalog } = t.fixtures.keys
    await warm(catalog)
    const last = catalog.at(-1) === 'a' ? 'b' : 'a'
    const mistyped = `${catalog.slice(0, -1)}${last}`
    const before = lookups()
    for (let i = 0; i < 3; i++) {
      const refused = await tiers(mistyped)
      expect(refused.statusCode).toBe(401)
      expect(refused.json().code).toBe('api_key_invalid')
    }
    expect(lookups()).toBe(before)
    await servedFromCache(catalog)
  })

  it('evicts a revoked key and no other', async () => {
    const { read, readWrite, otherOrg } = t.fixtures.keys
    await warm(read, readWrite, otherOrg)
    const cached = t.app.services.keys.size
    await revokeApiKey(t.storage.db, t.fixtures.keyIds.read, t.clock.now())
    await t.app.services.changes.check()
    expect(t.app.services.keys.size).toBe(cached - 1)
    await servedFromCache(readWrite, otherOrg)
    const refused = await tiers(read)
    expect(refused.statusCode).toBe(401)
    expect(refused.json().code).toBe('api_key_revoked')
  })

  it("evicts a suspended organisation's keys and no other's, and again when it is reinstated", async () => {
    const { catalog, read, otherOrg, noAgreement } = t.fixtures.keys
    await warm(catalog, read, otherOrg, noAgreement)
    await setOrganisationStatus(t.storage.db, t.fixtures.orgs.acme, 'suspended')
    await t.app.services.changes.check()
    expect(t.app.services.keys.size).toBe(2)
    await servedFromCache(otherOrg, noAgreement)
    for (const key of [catalog, read]) {
      const refused = await tiers(key)
      expect(refused.statusCode).toBe(403)
      expect(refused.json().code).toBe('organisation_suspended')
    }
    await setOrganisationStatus(t.storage.db, t.fixtures.orgs.acme, 'active')
    await t.app.services.changes.check()
    expect(t.app.services.keys.size).toBe(2)
    await warm(catalog, read)
    await servedFromCache(otherOrg, noAgreement, catalog, read)
  })

  it("evicts the keys of an organisation whose agreements changed, and no other's", async () => {
    const { readWrite, otherOrg } = t.fixtures.keys
    const progress = (key: string, student: string) =>
      t.call({ url: `/api/v1/students/${student}/progress`, headers: bearer(key) })
    expect((await progress(readWrite, STUDENTS.ada)).statusCode).toBe(200)
    expect((await progress(otherOrg, STUDENTS.cleo)).statusCode).toBe(200)
    await endAgreements(t.storage.db, { organisationId: t.fixtures.orgs.beta }, t.clock.now())
    await t.app.services.changes.check()
    expect(t.app.services.keys.size).toBe(1)
    const before = lookups()
    expect((await progress(readWrite, STUDENTS.ada)).statusCode).toBe(200)
    expect(lookups()).toBe(before)
    expect((await progress(otherOrg, STUDENTS.cleo)).statusCode).toBe(403)
    expect(lookups()).toBe(before + 1)
    await recordAgreement(
      t.storage.db,
      { organisationId: t.fixtures.orgs.beta, signedAt: t.clock.now(), expiresAt: null, documentRef: 'DSA-2' },
      t.clock.now(),
    )
    await t.app.services.changes.check()
    expect((await progress(otherOrg, STUDENTS.cleo)).statusCode).toBe(200)
    await servedFromCache(readWrite)
  })

  it('empties the cache when the access version moved without a logged change (a writer that predates the log)', async () => {
    await warm(t.fixtures.keys.catalog, t.fixtures.keys.otherOrg)
    await bumpVersion(t.storage.db, 'access')
    await t.app.services.changes.check()
    expect(t.app.services.keys.size).toBe(0)
    await warm(t.fixtures.keys.catalog)
  })
})

describe('key cache', () => {
  const t = perTest(() => buildTestApp())

  const randomHash = () => hashApiKey(generateApiKey().key)

  it('keeps a real key through a flood of 10,000 distinct unknown keys', async () => {
    // A key cache of 1,000 entries: 10,000 unknown keys would fill it ten times over.
    const keys = new KeyCache({ db: t.storage.db, clock: t.clock, maxEntries: 1000, maxUnknown: 2000 })
    const real = hashApiKey(t.fixtures.keys.read)
    expect(await keys.lookup(real)).toMatchObject({ keyId: t.fixtures.keyIds.read })
    for (let batch = 0; batch < 50; batch++) {
      const answers = await Promise.all(Array.from({ length: 200 }, () => keys.lookup(randomHash())))
      expect(answers.every((answer) => answer === null)).toBe(true)
    }
    // Still answered from memory (a lookup that had to ask storage would be a Promise).
    const hit = keys.lookup(real)
    expect(hit).not.toBeInstanceOf(Promise)
    expect(hit).toMatchObject({ keyId: t.fixtures.keyIds.read })
    expect(keys.size).toBe(1)
    expect(keys.unknownSize).toBe(2000)
  })

  it('believes "no such key" for 60 seconds', async () => {
    const keys = new KeyCache({ db: t.storage.db, clock: t.clock })
    const hash = randomHash()
    expect(await keys.lookup(hash)).toBeNull()
    expect(keys.lookup(hash)).toBeNull()
    t.clock.advance(59_999)
    expect(keys.lookup(hash)).toBeNull()
    expect(keys.storageLookups).toBe(1)
    t.clock.advance(1)
    expect(await keys.lookup(hash)).toBeNull()
    expect(keys.storageLookups).toBe(2)
  })

  it('keeps answering a known key while its periodic re-read runs in the background', async () => {
    const keys = new KeyCache({ db: t.storage.db, clock: t.clock, maxAgeMs: 60_000 })
    const hash = hashApiKey(t.fixtures.keys.catalog)
    await keys.lookup(hash)
    t.clock.advance(60_000)
    const answer = keys.lookup(hash)
    expect(answer).not.toBeInstanceOf(Promise)
    expect(answer).toMatchObject({ keyId: t.fixtures.keyIds.catalog })
    expect(keys.storageLookups).toBe(2)
  })

  it("evicts exactly an organisation's keys while full-cache drops and revocations reuse their slots", async () => {
    const keys = new KeyCache({ db: t.storage.db, clock: t.clock, maxEntries: 3 })
    const { catalog, read, write, readWrite, otherOrg } = t.fixtures.keys
    const cachedHere = (key: string) => !(keys.lookup(hashApiKey(key)) instanceof Promise)
    for (const key of [catalog, read, otherOrg, readWrite]) await keys.lookup(hashApiKey(key))
    // Full at three: the oldest (catalog) made room for readWrite.
    expect(keys.size).toBe(3)
    keys.evictKey(t.fixtures.keyIds.read)
    await keys.lookup(hashApiKey(write))
    expect([read, otherOrg, readWrite, write].map(cachedHere)).toEqual([false, true, true, true])
    keys.evictOrganisation(t.fixtures.orgs.acme)
    expect(keys.size).toBe(1)
    expect([otherOrg, readWrite, write].map(cachedHere)).toEqual([true, false, false])
    await keys.lookup(hashApiKey(readWrite))
    keys.evictOrganisation(t.fixtures.orgs.beta)
    expect([otherOrg, readWrite].map(cachedHere)).toEqual([false, true])
  })

  it('does not store an answer loaded before an eviction of the same key', async () => {
    const keys = new KeyCache({ db: t.storage.db, clock: t.clock })
    const loading = keys.lookup(hashApiKey(t.fixtures.keys.catalog))
    expect(loading).toBeInstanceOf(Promise)
    keys.evictKey(t.fixtures.keyIds.catalog)
    expect(await loading).toMatchObject({ keyId: t.fixtures.keyIds.catalog })
    expect(keys.size).toBe(0)
  })
})
