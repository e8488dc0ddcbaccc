import { describe, expect, it } from 'vitest'
import {
  DISPLAY_PREFIX_LENGTH,
  generateApiKey,
  hashApiKey,
  isWellFormedApiKey,
  keyMode,
} from '../../src/domain/api-key.js'

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
