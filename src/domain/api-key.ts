/**
 * API key format: `cur_<mode>_<32 random base62 chars><6 base62 chars of CRC32>`.
 *
 * - The fixed prefix lets secret scanners (and people) recognise a leaked key; the mode says
 *   whether it reaches live student data.
 * - 32 base62 characters carry 190 bits from the CSPRNG, well above the 128 required.
 * - The CRC32 suffix (the GitHub token scheme) lets a scanner, and our own auth path, reject a
 *   mistyped or invented token without a storage lookup. It is not a secret and proves nothing.
 * - Only the SHA-256 of the whole key is stored. A fast unsalted hash is right here: the input
 *   has 190 bits of entropy, so there is nothing for a slow hash to protect.
 */
import { hash, randomBytes } from 'node:crypto'
import { crc32 } from 'node:zlib'
import type { AgreementWindow } from './agreements.js'
import type { ScopeBits } from './scopes.js'

export type KeyMode = 'live' | 'test'

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const RANDOM_LENGTH = 32
const CHECKSUM_LENGTH = 6
const KEY_PATTERN = /^cur_(live|test)_[0-9A-Za-z]{38}$/

/** How many leading characters of a key are kept in clear to tell keys apart in listings. */
export const DISPLAY_PREFIX_LENGTH = 'cur_live_'.length + 6

function base62(value: number, width: number): string {
  let out = ''
  for (let i = 0; i < width; i++) {
    out = ALPHABET[value % 62] + out
    value = Math.floor(value / 62)
  }
  return out
}

function randomBase62(length: number): string {
  let out = ''
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // Rejection sampling keeps every character equally likely (248 = 4 * 62).
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62]
    }
  }
  return out
}

function checksum(body: string): string {
  return base62(crc32(body), CHECKSUM_LENGTH)
}

export interface NewApiKey {
  /** The secret, shown once. */
  readonly key: string
  readonly hash: string
  readonly displayPrefix: string
}

export function generateApiKey(mode: KeyMode = 'live'): NewApiKey {
  const body = `cur_${mode}_${randomBase62(RANDOM_LENGTH)}`
  const key = body + checksum(body)
  return { key, hash: hashApiKey(key), displayPrefix: key.slice(0, DISPLAY_PREFIX_LENGTH) }
}

/** True when the token has the key shape and a matching checksum; says nothing about validity. */
export function isWellFormedApiKey(token: string): boolean {
  return hasApiKeyShape(token) && hasValidChecksum(token)
}

/** The prefix, mode and length of a key, checksum not checked. */
export function hasApiKeyShape(token: string): boolean {
  return KEY_PATTERN.test(token)
}

/** The last six characters are the checksum of the rest (the token must have the key shape). */
export function hasValidChecksum(token: string): boolean {
  const split = token.length - CHECKSUM_LENGTH
  return checksum(token.slice(0, split)) === token.slice(split)
}

export function keyMode(token: string): KeyMode {
  return token.startsWith('cur_test_') ? 'test' : 'live'
}

export function hashApiKey(key: string): string {
  // The one-shot form is cheaper than createHash().update().digest() for a short input (figures: docs/performance.md).
  return hash('sha256', key, 'hex')
}

/**
 * A key's organisation as authentication sees it. The key cache keeps one per organisation
 * (and state), shared by all its keys, rather than a copy of the agreements per key.
 */
export interface KeyOrganisation {
  readonly id: string
  readonly active: boolean
  readonly agreements: readonly AgreementWindow[]
}

/** What authentication needs to know of a key (storage fetches it in one round trip; the key cache keeps it). */
export interface KeyRecord {
  readonly keyId: string
  readonly organisation: KeyOrganisation
  /** A test key of a sandbox organisation reaches only synthetic students and needs no agreement. */
  readonly sandbox: boolean
  readonly scopes: ScopeBits
  readonly expiresAt: number | null
  readonly revokedAt: number | null
  /** When the key was rolled: its answers then say it is deprecated and ends at `expiresAt`. */
  readonly rolledAt: number | null
}

export type KeyState = 'active' | 'revoked' | 'expired'

/**
 * One rule for the API, the dashboard and the CLI. A revocation takes effect when it is
 * recorded, whatever time it carries: a revocation date ahead of this instance's clock (another
 * instance's clock running fast) still means revoked. An expiry takes effect at its instant.
 * `countActiveKeys` (access-repository.ts) is the same rule in SQL.
 */
export function keyState(
  key: { readonly revokedAt: number | null; readonly expiresAt: number | null },
  now: number,
): KeyState {
  if (key.revokedAt !== null) return 'revoked'
  if (key.expiresAt !== null && key.expiresAt <= now) return 'expired'
  return 'active'
}

/** A stored key's state by the same rule, from its row's ISO times (a null one never came). */
export function keyRowState(row: { revoked_at: string | null; expires_at: string | null }, now: number): KeyState {
  const time = (iso: string | null) => (iso === null ? null : Date.parse(iso))
  return keyState({ revokedAt: time(row.revoked_at), expiresAt: time(row.expires_at) }, now)
}
