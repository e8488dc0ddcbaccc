/**
 * Dashboard passwords, hashed with scrypt (memory-hard; node:crypto, no native add-on).
 * Stored as `scrypt$N$r$p$salt$hash` so the cost can be raised later without breaking old hashes.
 */
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto'
import { COMMON_PASSWORDS } from './common-passwords.js'

const N = 32_768
const R = 8
const P = 1
const KEY_LENGTH = 32
// 128 * N * r bytes = 32 MiB per hash; Node's default ceiling is 32 MiB exactly.
const MAX_MEMORY = 64 * 1024 * 1024

export const PASSWORD_MIN_LENGTH = 12
export const PASSWORD_MAX_LENGTH = 200

function derive(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, { N: n, r, p, maxmem: MAX_MEMORY }, (error, key) =>
      error ? reject(error) : resolve(key),
    )
  })
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16)
  const key = await derive(password, salt, N, R, P)
  return ['scrypt', N, R, P, salt.toString('base64url'), key.toString('base64url')].join('$')
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$')
  if (scheme !== 'scrypt' || salt === undefined || hash === undefined) return false
  const expected = Buffer.from(hash, 'base64url')
  const actual = await derive(password, Buffer.from(salt, 'base64url'), Number(n), Number(r), Number(p))
  return actual.length === expected.length && timingSafeEqual(actual, expected)
}

/** True when the password, ignoring case and spaces, is on the common-password list. */
export function isCommonPassword(password: string): boolean {
  const folded = password.normalize('NFKC').toLowerCase()
  return COMMON_PASSWORDS.has(folded) || COMMON_PASSWORDS.has(folded.replace(/\s+/g, ''))
}

/**
 * Why a new password is refused, or null: every place a password is set asks this. Length is
 * what matters, and no common password (NIST SP 800-63B section 3.1.1.2).
 */
export function passwordProblem(password: string, email: string): string | null {
  if (password.length < PASSWORD_MIN_LENGTH)
    return `Use at least ${PASSWORD_MIN_LENGTH} characters; a few words together are easy to remember.`
  if (password.length > PASSWORD_MAX_LENGTH) return `Use at most ${PASSWORD_MAX_LENGTH} characters.`
  const name = email.split('@')[0]!.toLowerCase()
  if (name.length >= 4 && password.toLowerCase().includes(name))
    return 'Do not use your e-mail address in your password.'
  if (/^(.)\1+$/.test(password)) return 'Do not repeat one character.'
  if (isCommonPassword(password))
    return (
      'This is one of the most common passwords, which attackers try first. ' +
      'Choose another: a few unrelated words together are easy to remember.'
    )
  return null
}

/** A password that is hashed when nobody matches, so a login takes as long either way. */
export const DUMMY_HASH = 'scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'
