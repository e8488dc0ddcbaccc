/**
 * A sealed secret opens only under its key and for its context, and not once altered; sealing
 * the same text twice gives two different values.
 */
import { describe, expect, it } from 'vitest'
import { openSecret, purposeKey, sealSecret } from '../../src/domain/sealed-secret.js'

describe('sealed secrets', () => {
  const master = Buffer.alloc(32, 7)
  const key = purposeKey(master, 'totp-secret')

  it('opens what it sealed, and seals the same text differently each time', () => {
    const sealed = sealSecret(key, 'totp:a', 'JBSWY3DPEHPK3PXP')
    expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/)
    expect(sealed).not.toContain('JBSWY3DPEHPK3PXP')
    expect(openSecret(key, 'totp:a', sealed)).toBe('JBSWY3DPEHPK3PXP')
    expect(sealSecret(key, 'totp:a', 'JBSWY3DPEHPK3PXP')).not.toBe(sealed)
  })

  it('does not open for another context, another key or purpose, or once altered', () => {
    const sealed = sealSecret(key, 'totp:a', 'JBSWY3DPEHPK3PXP')
    expect(openSecret(key, 'totp:b', sealed)).toBeUndefined()
    expect(openSecret(purposeKey(master, 'recovery-code'), 'totp:a', sealed)).toBeUndefined()
    expect(openSecret(purposeKey(Buffer.alloc(32, 8), 'totp-secret'), 'totp:a', sealed)).toBeUndefined()
    const [version, iv, tag, body] = sealed.split('.') as [string, string, string, string]
    const flipped = Buffer.from(body, 'base64url')
    flipped.writeUInt8(flipped.readUInt8(0) ^ 1, 0)
    expect(openSecret(key, 'totp:a', [version, iv, tag, flipped.toString('base64url')].join('.'))).toBeUndefined()
    // A tag cut short would be easier to forge: refused, not checked on fewer bytes.
    const short = Buffer.from(tag, 'base64url').subarray(0, 4).toString('base64url')
    expect(openSecret(key, 'totp:a', [version, iv, short, body].join('.'))).toBeUndefined()
    for (const bad of ['', 'v1', 'v2.a.b.c', sealed.replace('v1.', 'v0.')])
      expect(openSecret(key, 'totp:a', bad)).toBeUndefined()
  })
})
