/**
 * WebAuthn challenges that need no storage until they are used: 16 random bytes, the expiry, and
 * an HMAC over both, the purpose and the account they are for. Anyone may ask for a sign-in
 * challenge, so none is written when it is made; the one that signs a valid answer is recorded
 * then, once, which is what makes it single use (cases/passkeys.ts).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

export type ChallengePurpose = 'register' | 'sign-in' | 'second-step'

const NONCE = 16
const EXPIRY = 8
const MAC = 32

function mac(secret: Buffer, head: Buffer, purpose: ChallengePurpose, accountId: string | null): Buffer {
  return createHmac('sha256', secret)
    .update(head)
    .update(`\n${purpose}\n${accountId ?? ''}`)
    .digest()
}

/** A new challenge for `purpose` (and the account it is for, if any), valid until `expiresAt`. */
export function makeChallenge(
  secret: Buffer,
  purpose: ChallengePurpose,
  accountId: string | null,
  expiresAt: number,
): Uint8Array<ArrayBuffer> {
  const head = Buffer.alloc(NONCE + EXPIRY)
  randomBytes(NONCE).copy(head)
  head.writeBigUInt64BE(BigInt(expiresAt), NONCE)
  const bytes = Buffer.concat([head, mac(secret, head, purpose, accountId)])
  const copy = new Uint8Array(bytes.length)
  copy.set(bytes)
  return copy
}

/**
 * The challenge's expiry if `challenge` (base64url, as a browser returns it) is ours for this
 * purpose and account, and still valid; else null.
 */
export function challengeExpiry(
  secret: Buffer,
  challenge: string,
  purpose: ChallengePurpose,
  accountId: string | null,
  now: number,
): number | null {
  const bytes = Buffer.from(challenge, 'base64url')
  if (bytes.length !== NONCE + EXPIRY + MAC) return null
  const head = bytes.subarray(0, NONCE + EXPIRY)
  if (!timingSafeEqual(bytes.subarray(NONCE + EXPIRY), mac(secret, head, purpose, accountId))) return null
  const expiresAt = Number(head.readBigUInt64BE(NONCE))
  return expiresAt > now ? expiresAt : null
}
