/**
 * TOTP and recovery codes: RFC 6238's SHA-1 test vectors, the window of one step either side,
 * a step once used never passing again, what a typed code may look like, and recovery codes'
 * form, normalisation and keyed hash.
 */
import { describe, expect, it } from 'vitest'
import {
  newRecoveryCodes,
  newTotpSecret,
  normaliseRecoveryCode,
  normaliseTotpCode,
  RECOVERY_CODE_COUNT,
  recoveryCodeHash,
  totpCode,
  totpStep,
  totpUri,
  verifyTotp,
} from '../../src/domain/totp.js'

/** RFC 6238 Appendix B's SHA-1 seed, the ASCII "12345678901234567890", in base32. */
const RFC_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ'

/** RFC 6238 Appendix B, SHA-1: time (s), T, the 8-digit TOTP. Six digits are its last six (mod 10^6). */
const VECTORS: [number, number, string][] = [
  [59, 0x1, '94287082'],
  [1111111109, 0x23523ec, '07081804'],
  [1111111111, 0x23523ed, '14050471'],
  [1234567890, 0x273ef07, '89005924'],
  [2000000000, 0x3f940aa, '69279037'],
  [20000000000, 0x27bc86aa, '65353130'],
]

describe('TOTP (RFC 6238)', () => {
  it.each(VECTORS)('at %i s: step %i, code %s', (seconds, step, code) => {
    expect(totpStep(seconds * 1000)).toBe(step)
    expect(totpCode(RFC_SECRET, step)).toBe(code.slice(-6))
    expect(verifyTotp(RFC_SECRET, code.slice(-6), seconds * 1000)).toBe(step)
  })

  it('accepts a code one step either side of now, not two, and returns the step it matched', () => {
    const at = 1234567890_000
    const now = totpStep(at)
    for (const delta of [-1, 0, 1])
      expect(verifyTotp(RFC_SECRET, totpCode(RFC_SECRET, now + delta), at)).toBe(now + delta)
    for (const delta of [-2, 2]) expect(verifyTotp(RFC_SECRET, totpCode(RFC_SECRET, now + delta), at)).toBeNull()
  })

  it('never accepts a code of the step last used or an earlier one', () => {
    const at = 1234567890_000
    const now = totpStep(at)
    expect(verifyTotp(RFC_SECRET, totpCode(RFC_SECRET, now), at, now)).toBeNull()
    expect(verifyTotp(RFC_SECRET, totpCode(RFC_SECRET, now - 1), at, now - 1)).toBeNull()
    expect(verifyTotp(RFC_SECRET, totpCode(RFC_SECRET, now), at, now - 1)).toBe(now)
    expect(verifyTotp(RFC_SECRET, totpCode(RFC_SECRET, now + 1), at, now)).toBe(now + 1)
  })

  it('reads a code typed with spaces or a dash, and nothing that is not six digits', () => {
    expect(normaliseTotpCode(' 287 082 ')).toBe('287082')
    expect(normaliseTotpCode('287-082')).toBe('287082')
    for (const bad of ['', '28708', '2870821', '28708a', '２８７０８２', '287.082'])
      expect(normaliseTotpCode(bad)).toBeNull()
    expect(verifyTotp(RFC_SECRET, '287 082', 59_000)).toBe(1)
    expect(verifyTotp(RFC_SECRET, 'abcdef', 59_000)).toBeNull()
  })

  it('makes 160-bit base32 secrets, each new, and the otpauth URI apps read', () => {
    const secrets = new Set(Array.from({ length: 50 }, () => newTotpSecret()))
    expect(secrets.size).toBe(50)
    for (const secret of secrets) expect(secret).toMatch(/^[A-Z2-7]{32}$/)
    expect(totpUri(RFC_SECRET, 'dana+ops@acme.example')).toBe(
      'otpauth://totp/Curriculum%20API:dana%2Bops%40acme.example?issuer=Curriculum%20API' +
        `&secret=${RFC_SECRET}&algorithm=SHA1&digits=6&period=30`,
    )
  })
})

describe('recovery codes', () => {
  it('makes ten different codes like xxxxx-xxxxx of unambiguous characters', () => {
    const codes = newRecoveryCodes()
    expect(codes).toHaveLength(RECOVERY_CODE_COUNT)
    expect(new Set(codes).size).toBe(RECOVERY_CODE_COUNT)
    for (const code of codes) {
      expect(code).toMatch(/^[0-9a-hjkmnp-tv-z]{5}-[0-9a-hjkmnp-tv-z]{5}$/)
      expect(normaliseRecoveryCode(code)).toBe(code.replace('-', ''))
    }
  })

  it('draws every character about as often (no bias from the bytes)', () => {
    const counts = new Map<string, number>()
    for (const code of newRecoveryCodes(2000))
      for (const char of code.replace('-', '')) counts.set(char, (counts.get(char) ?? 0) + 1)
    expect(counts.size).toBe(32)
    // 20,000 characters over 32: 625 each on average; 5 standard deviations is about 120.
    for (const n of counts.values()) expect(Math.abs(n - 625)).toBeLessThan(125)
  })

  it('ignores case, spaces and dashes, and reads o, i and l as 0, 1 and 1', () => {
    expect(normaliseRecoveryCode(' 7K2MQ - X9D4H ')).toBe('7k2mqx9d4h')
    expect(normaliseRecoveryCode('7k2mqx9d4h')).toBe('7k2mqx9d4h')
    expect(normaliseRecoveryCode('7k2mq\u2013x9d4h')).toBe('7k2mqx9d4h')
    expect(normaliseRecoveryCode('O0IL1-abcde')).toBe('00111abcde')
    for (const bad of ['', '7k2mq', '7k2mq-x9d4h-1', '7k2mq-x9d4u', '7k2mq-x9d4!'])
      expect(normaliseRecoveryCode(bad)).toBeNull()
  })

  it('stores a keyed hash bound to the account', () => {
    const key = Buffer.alloc(32, 1)
    const hash = recoveryCodeHash(key, 'account-a', '7k2mqx9d4h')
    expect(hash).toMatch(/^[0-9a-f]{64}$/)
    expect(recoveryCodeHash(key, 'account-a', '7k2mqx9d4h')).toBe(hash)
    expect(recoveryCodeHash(key, 'account-b', '7k2mqx9d4h')).not.toBe(hash)
    expect(recoveryCodeHash(Buffer.alloc(32, 2), 'account-a', '7k2mqx9d4h')).not.toBe(hash)
  })
})
