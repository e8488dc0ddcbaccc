/**
 * Time-based one-time passwords (RFC 6238, through `otpauth`) and recovery codes: the pure rules
 * of the second factor (cases/second-factor.ts stores and limits them). Codes are the usual
 * authenticator apps' kind: HMAC-SHA1, 6 digits, a 30-second step, a 160-bit secret.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { HOTP, Secret, TOTP } from 'otpauth'

/** What authenticator apps show above the code. */
export const TOTP_ISSUER = 'Curriculum API'
export const TOTP_PERIOD_SECONDS = 30
export const TOTP_DIGITS = 6
/** Steps accepted either side of the current one: a phone's clock 30 s off, or a code typed as it turned. */
export const TOTP_WINDOW = 1
/** RFC 4226 section 4 asks for at least 128 bits and recommends 160. */
const SECRET_BYTES = 20

/** A new shared secret, base32 (RFC 4648) as authenticator apps take it; otpauth draws it from node:crypto. */
export function newTotpSecret(): string {
  return new Secret({ size: SECRET_BYTES }).base32
}

/** The otpauth:// URI an authenticator app reads from the QR code, labelled with the account's e-mail. */
export function totpUri(secret: string, email: string): string {
  return new TOTP({
    issuer: TOTP_ISSUER,
    label: email,
    secret: Secret.fromBase32(secret),
    algorithm: 'SHA1',
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD_SECONDS,
  }).toString()
}

/** The RFC 6238 time step (T) at `at` (ms since the epoch): the counter the code is made from. */
export function totpStep(at: number): number {
  return Math.floor(at / 1000 / TOTP_PERIOD_SECONDS)
}

/** The code of `step`. */
export function totpCode(secret: string, step: number): string {
  return HOTP.generate({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: TOTP_DIGITS, counter: step })
}

/** What a person typed, as a code: spaces and a dash in the middle ("123 456") dropped; null when not 6 digits. */
export function normaliseTotpCode(input: string): string | null {
  const code = input.replace(/[\s-]/g, '')
  return /^\d{6}$/.test(code) ? code : null
}

/**
 * The step whose code `input` is, within TOTP_WINDOW steps of `at`, or null. Only steps after
 * `after` (the last step accepted) count, so a code once accepted never passes again; the
 * current step is tried first.
 */
export function verifyTotp(secret: string, input: string, at: number, after: number | null = null): number | null {
  const code = normaliseTotpCode(input)
  if (code === null) return null
  const given = Buffer.from(code)
  const now = totpStep(at)
  const steps = [now]
  for (let delta = 1; delta <= TOTP_WINDOW; delta++) steps.push(now - delta, now + delta)
  for (const step of steps) {
    if (after !== null && step <= after) continue
    if (timingSafeEqual(given, Buffer.from(totpCode(secret, step)))) return step
  }
  return null
}

/** Recovery codes given at once: each works once. */
export const RECOVERY_CODE_COUNT = 10
/** Crockford's base32, lower-case: no i, l, o or u, so nothing reads as another character. */
const RECOVERY_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'
/** Characters of a code: 50 bits from crypto randomness, shown as two groups of five. */
const RECOVERY_LENGTH = 10

/** `RECOVERY_CODE_COUNT` new codes like `7k2mq-x9d4h`, all different. */
export function newRecoveryCodes(count = RECOVERY_CODE_COUNT): string[] {
  const codes = new Set<string>()
  while (codes.size < count) {
    // 256 is a multiple of 32, so each byte's low five bits are uniform.
    const chars = [...randomBytes(RECOVERY_LENGTH)].map((byte) => RECOVERY_ALPHABET[byte & 31]).join('')
    codes.add(`${chars.slice(0, 5)}-${chars.slice(5)}`)
  }
  return [...codes]
}

/**
 * A typed recovery code in its stored form: case, spaces and dashes ignored, and o, i and l read
 * as 0, 1 and 1 as Crockford's base32 does; null when it cannot be a code.
 */
export function normaliseRecoveryCode(input: string): string | null {
  const code = input
    .toLowerCase()
    .replace(/[\s\u2010-\u2015-]/g, '')
    .replace(/o/g, '0')
    .replace(/[il]/g, '1')
  if (code.length !== RECOVERY_LENGTH) return null
  return [...code].every((char) => RECOVERY_ALPHABET.includes(char)) ? code : null
}

/**
 * What is stored of a recovery code: HMAC-SHA256 under a server key, of the account and the
 * normalised code. 50 bits would fall to an offline search of a plain hash; keyed and bound to the
 * account, a leaked table alone gives nothing to search.
 */
export function recoveryCodeHash(key: Buffer, accountId: string, normalised: string): string {
  return createHmac('sha256', key).update(`${accountId}:${normalised}`).digest('hex')
}
