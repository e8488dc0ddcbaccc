/**
 * Rolling a key, on each engine: the new key copies name, scopes, mode and organisation; the old
 * one works until the chosen end (or its own earlier expiry), or is revoked at once for "now";
 * only a key in force that was not rolled rolls, also when two rolls race; a roll never meets
 * the organisation's key cap; each instance's key cache is told through the access change log.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createKey, rollKey } from '../../src/cases/api-keys.js'
import { keyRowState } from '../../src/domain/api-key.js'
import { ConflictError } from '../../src/domain/errors.js'
import { ROLL_OVERLAPS, rollEnd } from '../../src/domain/key-roll.js'
import { accessChangesAfter } from '../../src/storage/access-change-repository.js'
import {
  countActiveKeys,
  createApiKey,
  createOrganisation,
  findApiKey,
  KeyLimitError,
  revokeApiKey,
} from '../../src/storage/access-repository.js'
import type { Storage } from '../../src/storage/connection.js'
import type { ApiKeyRow } from '../../src/storage/tables.js'
import { createTestStorage } from '../helper.js'

const T0 = Date.parse('2026-03-02T09:00:00.000Z')
const HOUR = 3_600_000
/** Enough for two rolls' transactions to overlap on PostgreSQL (without the conditional update, the race test fails). */
const RACES = 8

describe('rolling a key', () => {
  let storage: Storage
  let organisationId: string

  beforeEach(async () => {
    storage = await createTestStorage()
    organisationId = (await createOrganisation(storage.db, 'Acme Learning', T0)).id
  })
  afterEach(() => storage.close())

  async function newKey(expiresAt: number | null = null): Promise<ApiKeyRow> {
    const spec = {
      organisationId,
      name: 'production',
      scopes: ['students:read'] as const,
      expiresAt,
      mode: 'live' as const,
    }
    return (await createApiKey(storage.db, { ...spec, scopes: [...spec.scopes] }, T0)).row
  }

  it('makes a key like the old one, and the old one works until the end of the overlap', async () => {
    const old = await newKey()
    const rolled = await rollKey(storage.db, { key: old, end: T0 + 24 * HOUR, createdBy: undefined }, T0 + 1000)
    expect(rolled.row).toMatchObject({
      organisation_id: organisationId,
      name: 'production',
      scopes: 'students:read',
      mode: 'live',
      expires_at: null,
      rolled_at: null,
    })
    expect(rolled.key.startsWith('cur_live_')).toBe(true)
    expect(rolled.row.id).not.toBe(old.id)
    const after = (await findApiKey(storage.db, old.id))!
    expect(after).toMatchObject({
      rolled_at: new Date(T0 + 1000).toISOString(),
      replaced_by: rolled.row.id,
      expires_at: new Date(T0 + 24 * HOUR).toISOString(),
      revoked_at: null,
    })
    expect(rolled.old).toEqual(after)
    expect(keyRowState(after, T0 + 24 * HOUR - 1)).toBe('active')
    expect(keyRowState(after, T0 + 24 * HOUR)).toBe('expired')
    // Every instance forgets the old key at its next poll.
    const changes = await accessChangesAfter(storage.db, 0, 100)
    expect(changes.at(-1)).toMatchObject({ kind: 'key_rolled', key_id: old.id, organisation_id: organisationId })
  })

  it('revokes the old key at once when the end is now (a leaked key)', async () => {
    const old = await newKey()
    const rolled = await rollKey(storage.db, { key: old, end: T0 }, T0)
    expect(rolled.old.revoked_at).toBe(new Date(T0).toISOString())
    expect(keyRowState(rolled.old, T0)).toBe('revoked')
    const kinds = (await accessChangesAfter(storage.db, 0, 100)).map((change) => change.kind)
    expect(kinds.slice(-2)).toEqual(['key_rolled', 'key_revoked'])
  })

  it('keeps an earlier expiry of the old key', async () => {
    const old = await newKey(T0 + 2 * HOUR)
    const rolled = await rollKey(storage.db, { key: old, end: T0 + 7 * 24 * HOUR }, T0)
    expect(rolled.old.expires_at).toBe(new Date(T0 + 2 * HOUR).toISOString())
  })

  it('refuses a revoked, expired or already rolled key', async () => {
    const revoked = await revokeApiKey(storage.db, (await newKey()).id, T0)
    await expect(rollKey(storage.db, { key: revoked, end: T0 + HOUR }, T0)).rejects.toThrow(ConflictError)
    const expiring = await newKey(T0 + HOUR)
    await expect(rollKey(storage.db, { key: expiring, end: T0 + 2 * HOUR }, T0 + HOUR)).rejects.toThrow(/expired/)
    const old = await newKey()
    const { old: rolled } = await rollKey(storage.db, { key: old, end: T0 + HOUR }, T0)
    await expect(rollKey(storage.db, { key: rolled, end: T0 + HOUR }, T0)).rejects.toThrow(/rolled already/)
    // A stale copy read before the roll is refused by the database, not only by the check.
    await expect(rollKey(storage.db, { key: old, end: T0 + HOUR }, T0)).rejects.toThrow(/meanwhile/)
  })

  it('leaves one replacement when two rolls of a key race', async () => {
    for (let round = 0; round < RACES; round++) {
      const old = await newKey()
      const results = await Promise.allSettled([
        rollKey(storage.db, { key: old, end: T0 + HOUR }, T0),
        rollKey(storage.db, { key: old, end: T0 + 24 * HOUR }, T0),
      ])
      expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1)
      const refused = results.find((result) => result.status === 'rejected') as PromiseRejectedResult
      expect(refused.reason).toBeInstanceOf(ConflictError)
      const keys = await storage.db.selectFrom('api_keys').select('id').where('name', '=', 'production').execute()
      expect(keys).toHaveLength(2 * (round + 1))
    }
  })

  it('never meets the key cap: the rolled key is not counted, and a new key fits in its place', async () => {
    const cap = 2
    const first = await newKey()
    await newKey()
    expect(await countActiveKeys(storage.db, organisationId, T0)).toBe(cap)
    await rollKey(storage.db, { key: first, end: T0 + HOUR }, T0)
    expect(await countActiveKeys(storage.db, organisationId, T0)).toBe(cap)
    const spec = { organisationId, name: 'third', scopes: [], expiresAt: null, maxActiveKeys: cap }
    await expect(createKey(storage.db, spec, T0)).rejects.toThrow(KeyLimitError)
  })
})

describe('the overlap a person chooses', () => {
  it('takes the named overlaps, a date or a timestamp within 30 days, and explains a refusal', () => {
    expect(rollEnd('now', T0)).toEqual({ end: T0 })
    expect(rollEnd('1h', T0)).toEqual({ end: T0 + HOUR })
    expect(rollEnd('24h', T0)).toEqual({ end: T0 + ROLL_OVERLAPS['24h'] })
    expect(rollEnd('7d', T0)).toEqual({ end: T0 + 7 * 24 * HOUR })
    expect(rollEnd('2026-03-10', T0)).toEqual({ end: Date.parse('2026-03-10T00:00:00.000Z') })
    expect(rollEnd('2026-03-02T12:30:00Z', T0)).toEqual({ end: Date.parse('2026-03-02T12:30:00Z') })
    expect(rollEnd('2026-03-01', T0)).toMatchObject({ refused: expect.stringContaining('future') })
    expect(rollEnd('2026-05-01', T0)).toMatchObject({ refused: expect.stringContaining('30 days') })
    expect(rollEnd('toString', T0)).toMatchObject({ refused: expect.stringContaining('neither') })
    expect(rollEnd('2h', T0)).toMatchObject({ refused: expect.stringContaining('neither') })
  })
})
