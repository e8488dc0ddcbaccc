import { describe, expect, it } from 'vitest'
import {
  DISPLAY_PREFIX_LENGTH,
  generateApiKey,
  hashApiKey,
  isWellFormedApiKey,
  keyMode,
  type KeyRecord,
  keyState,
} from '../../src/domain/api-key.js'
import { usableKey } from '../../src/http/admission.js'
import { keyRowState } from '../../src/domain/api-key.js'
import type { ApiKeyRow } from '../../src/storage/tables.js'

describe('API keys', () => {
  it('have a recognisable prefix, 190 random bits and a checksum', () => {
    const { key, hash, displayPrefix } = generateApiKey()
    expect(key).toMatch(/^cur_live_[0-9A-Za-z]{38}$/)
    expect(isWellFormedApiKey(key)).toBe(true)
    expect(hash).toBe(hashApiKey(key))
    expect(hash).toMatch(/^[0-9a-f]{64}$/)
    expect(displayPrefix).toBe(key.slice(0, DISPLAY_PREFIX_LENGTH))
    expect(32 * Math.log2(62)).toBeGreaterThan(128)
    expect(keyMode(generateApiKey('test').key)).toBe('test')
  })

  it('are all different and use the whole alphabet evenly', () => {
    const keys = Array.from({ length: 2000 }, () => generateApiKey().key)
    expect(new Set(keys).size).toBe(keys.length)
    const counts = new Map<string, number>()
    for (const key of keys) for (const c of key.slice(9, 41)) counts.set(c, (counts.get(c) ?? 0) + 1)
    expect(counts.size).toBe(62)
    const expected = (2000 * 32) / 62
    for (const count of counts.values()) expect(Math.abs(count - expected)).toBeLessThan(expected * 0.3)
  })

  it('reject typos and invented tokens by checksum, without a lookup', () => {
    const { key } = generateApiKey()
    const swapped = key.slice(0, 12) + (key[12] === 'a' ? 'b' : 'a') + key.slice(13)
    expect(isWellFormedApiKey(swapped)).toBe(false)
    expect(isWellFormedApiKey(key.slice(0, -1))).toBe(false)
    expect(isWellFormedApiKey(`${key}x`)).toBe(false)
    expect(isWellFormedApiKey(key.replace('cur_live_', 'cur_prod_'))).toBe(false)
    expect(isWellFormedApiKey('')).toBe(false)
  })
})

describe('key state, one rule for the API, the dashboard and the CLI', () => {
  const now = Date.parse('2026-06-01T12:00:00.000Z')
  const record = (revokedAt: number | null, expiresAt: number | null): KeyRecord => ({
    keyId: 'k',
    organisation: { id: 'o', active: true, agreements: [] },
    sandbox: false,
    scopes: 0,
    revokedAt,
    expiresAt,
    rolledAt: null,
  })
  const row = (revoked_at: string | null, expires_at: string | null) =>
    ({ revoked_at, expires_at }) as unknown as ApiKeyRow

  it('treats any recorded revocation as revoked, even one stamped ahead of this clock', () => {
    // Another instance whose clock runs a minute fast revoked the key.
    const ahead = now + 60_000
    expect(keyState({ revokedAt: ahead, expiresAt: null }, now)).toBe('revoked')
    expect(usableKey(record(ahead, null), now)).toBe('api_key_revoked')
    expect(keyRowState(row(new Date(ahead).toISOString(), null), now)).toBe('revoked')
  })

  it('expires at the expiry instant, and revocation wins over expiry', () => {
    expect(usableKey(record(null, now), now)).toBe('api_key_expired')
    expect(usableKey(record(null, now + 1), now)).toMatchObject({ keyId: 'k' })
    expect(keyRowState(row(null, new Date(now).toISOString()), now)).toBe('expired')
    expect(keyRowState(row(null, new Date(now + 1).toISOString()), now)).toBe('active')
    expect(keyState({ revokedAt: now - 1, expiresAt: now - 1 }, now)).toBe('revoked')
  })
})
