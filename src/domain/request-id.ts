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
/** The character codes of the hexadecimal digits. */
const DIGITS = Array.from('0123456789abcdef', (digit) => digit.charCodeAt(0))
const DASH = '-'.charCodeAt(0)
/** What follows an id's version digit: 3 random digits, a dash, the variant and 3, a dash and 12. */
const TAIL = 21
/** Tails made at a time, as one string. */
const TAILS = 409
const random = new Uint8Array(TAIL * TAILS)
const text = Buffer.alloc(TAIL * TAILS)
let tails = ''
let used = TAILS

let lastMs = Number.NaN
let lastPrefix = ''

/** TAILS tails of random digits (a random byte's low 4 bits each), the variant (10xx) in place. */
function makeTails(): void {
  randomFillSync(random)
  for (let i = 0; i < text.length; i++) text[i] = DIGITS[random[i]! & 0x0f]!
  for (let at = 0; at < text.length; at += TAIL) {
    text[at + 3] = DASH
    text[at + 4] = DIGITS[(random[at + 4]! & 0x03) | 0x08]!
    text[at + 8] = DASH
  }
  tails = text.toString('latin1')
  used = 0
}

/**
 * A new request id for a request that arrived at `ms` (milliseconds since the epoch): the time's
 * digits, kept for the millisecond, and a tail cut from one string of random tails, so that an id
 * is two pieces of text (cheap to read as one: request-log-window.ts reads every id's digits).
 */
export function requestIdAt(ms: number): string {
  if (ms !== lastMs) {
    const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0')
    lastPrefix = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7`
    lastMs = ms
  }
  if (used === TAILS) makeTails()
  const at = used++ * TAIL
  return lastPrefix + tails.slice(at, at + TAIL)
}

/** The millisecond a request id made by `requestIdAt` names; undefined for any other string. */
export function requestIdTime(id: string): number | undefined {
  if (!V7.test(id)) return undefined
  return Number.parseInt(id.slice(0, 8), 16) * 0x10000 + Number.parseInt(id.slice(9, 13), 16)
}
