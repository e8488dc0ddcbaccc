/**
 * The random tokens that stand for something on their own (a session cookie, a mailed link):
 * 32 random bytes in base64url, of which storage keeps only the SHA-256, so that a copy of the
 * database or a backup opens no session and follows no link.
 */
import { createHash, randomBytes } from 'node:crypto'

export function newBearerToken(): string {
  return randomBytes(32).toString('base64url')
}

/** The stored form of a token: SHA-256, hex. */
export function bearerTokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

/** Whether `value` has a token's shape (43 base64url characters): anything else names nothing and is not looked up. */
export function isBearerToken(value: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(value)
}
