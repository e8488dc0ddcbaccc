/**
 * Request ids are UUIDv7 (RFC 9562 5.7): the first 48 bits are the millisecond the request
 * arrived, then the version, 74 random bits and the variant. The request log finds a request by
 * its id through the time the id carries, with no index of random ids to keep up on every request.
 *
 * Made from random bytes drawn 4 KB at a time, as `crypto.randomUUID` does, and the hex digits of
 * the time computed once per millisecond: a busy server makes many ids in one millisecond.
 *
 * @example requestIdTime(requestIdAt(1_764_000_000_000)) // 1_764_000_000_000
 */
import { randomFillSync } from 'node:crypto'

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i
/** Each byte's two hexadecimal digits. */
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'))
/** The 10 random bytes an id takes, for 409 ids at a time. */
const RANDOM_BYTES = 10
const pool = new Uint8Array(RANDOM_BYTES * 409)
let used = pool.length

let lastMs = Number.NaN
let lastPrefix = ''

/** A new request id for a request that arrived at `ms` (milliseconds since the epoch). */
export function requestIdAt(ms: number): string {
  if (ms !== lastMs) {
    const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0')
    lastPrefix = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7`
    lastMs = ms
  }
  if (used === pool.length) {
    randomFillSync(pool)
    used = 0
  }
  const r = used
  used += RANDOM_BYTES
  const b = pool
  // 12 random bits after the version digit, then the variant (10xx) and 62 random bits.
  return (
    `${lastPrefix}${HEX[b[r]! & 0x0f]!.slice(1)}${HEX[b[r + 1]!]}-${HEX[(b[r + 2]! & 0x3f) | 0x80]}${HEX[b[r + 3]!]}-` +
    `${HEX[b[r + 4]!]}${HEX[b[r + 5]!]}${HEX[b[r + 6]!]}${HEX[b[r + 7]!]}${HEX[b[r + 8]!]}${HEX[b[r + 9]!]}`
  )
}

/** The millisecond a request id made by `requestIdAt` names; undefined for any other string. */
export function requestIdTime(id: string): number | undefined {
  if (!V7.test(id)) return undefined
  return Number.parseInt(id.slice(0, 8), 16) * 0x10000 + Number.parseInt(id.slice(9, 13), 16)
}
