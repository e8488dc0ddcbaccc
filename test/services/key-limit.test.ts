/**
 * An organisation holds at most MAX_KEYS_PER_ORGANISATION active keys, because each key has a
 * rate limit of its own. The count and the insert are one step: creations racing for the last
 * slot (parallel connections on PostgreSQL) leave exactly one winner.
 */
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'
import { createKey } from '../../src/cases/api-keys.js'
import { countActiveKeys, KeyLimitError, listApiKeys, revokeApiKey } from '../../src/storage/access-repository.js'
import { DashboardClient } from '../dashboard/dashboard-client.js'
import { buildTestApp } from '../helper.js'
import { perTest } from '../support/built.js'

const HOUR = 3_600_000

describe('MAX_KEYS_PER_ORGANISATION', () => {
  it('defaults to 10 and accepts 1 to 10,000', () => {
    expect(loadConfig({}).maxKeysPerOrganisation).toBe(10)
    expect(loadConfig({ MAX_KEYS_PER_ORGANISATION: '3' }).maxKeysPerOrganisation).toBe(3)
    expect(() => loadConfig({ MAX_KEYS_PER_ORGANISATION: '0' })).toThrow(ConfigError)
  })
})

describe('keys per organisation', () => {
  const t = perTest(() => buildTestApp({ env: { MAX_KEYS_PER_ORGANISATION: '10' } }))

  const create = (at: number, expiresAt: number | null = null) =>
    createKey(
      t.storage.db,
      { organisationId: t.fixtures.orgs.gamma, name: 'k', scopes: [], expiresAt, maxActiveKeys: 3 },
      at,
    )

  it('refuses a key over the cap; revoked and expired keys do not count', async () => {
    const now = t.clock.now()
    // Gamma holds one key from the fixtures.
    const first = await create(now)
    await create(now, now + HOUR)
    await expect(create(now)).rejects.toThrow(KeyLimitError)
    await expect(create(now)).rejects.toThrow(/already has 3 active keys/)
    await revokeApiKey(t.storage.db, first.row.id, now)
    await create(now)
    await expect(create(now)).rejects.toThrow(KeyLimitError)
    // An hour later the expiring key no longer counts.
    expect(await countActiveKeys(t.storage.db, t.fixtures.orgs.gamma, now + HOUR)).toBe(2)
    await create(now + HOUR)
    expect(await countActiveKeys(t.storage.db, t.fixtures.orgs.gamma, now + HOUR)).toBe(3)
  })

  it('lets exactly one of eight creations racing for the last slot through, in every round', async () => {
    for (let round = 0; round < 5; round++) {
      const organisationId = t.fixtures.orgs.beta
      const active = await countActiveKeys(t.storage.db, organisationId, t.clock.now())
      const limit = active + 1
      const results = await Promise.allSettled(
        Array.from({ length: 8 }, () =>
          createKey(
            t.storage.db,
            { organisationId, name: `race ${round}`, scopes: [], expiresAt: null, maxActiveKeys: limit },
            t.clock.now(),
          ),
        ),
      )
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(KeyLimitError)
      expect(await countActiveKeys(t.storage.db, organisationId, t.clock.now())).toBe(limit)
    }
  })

  it('answers the dashboard form with "Key limit reached" (409, on the form, the name kept) at the cap, also when two creations race for the last slot', async () => {
    const partner = new DashboardClient(t.app, '192.0.2.20')
    expect((await partner.signUp('cap@partner.example')).statusCode).toBe(200)
    const createTestKey = (name: string) => partner.post('/dashboard/partner/keys', { mode: 'test', 'test-name': name })
    // Sign-up made the first test key; eight more reach 9 of 10.
    for (let i = 2; i <= 9; i++) expect((await createTestKey(`key ${i}`)).statusCode).toBe(303)
    const raced = await Promise.all([createTestKey('last a'), createTestKey('last b')])
    expect(raced.map((res) => res.statusCode).sort()).toEqual([303, 409])
    const refused = raced.find((res) => res.statusCode === 409)!
    expect(refused.body).toContain('Key limit reached: you already have 10 active test keys')
    expect(refused.body).toMatch(/value="last [ab]"/)
    const sandbox = (
      await t.storage.db
        .selectFrom('accounts')
        .select('sandbox_organisation_id')
        .where('email', '=', 'cap@partner.example')
        .executeTakeFirstOrThrow()
    ).sandbox_organisation_id!
    expect((await listApiKeys(t.storage.db, sandbox)).filter((key) => key.revoked_at === null)).toHaveLength(10)
    expect((await createTestKey('one more')).statusCode).toBe(409)
  })
})
