/**
 * Request ids are UUIDv7 (RFC 9562 5.7): the first 48 bits are the millisecond the request
 * arrived, the rest random (74 bits). The request log finds a request by its id through the
 * time the id carries, with no index of random ids to keep up on every request.
 *
 * @example requestIdTime(requestIdAt(1_764_000_000_000)) // 1_764_000_000_000
 */
import { randomUUID } from 'node:crypto'

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i
/** Where the version digit of `randomUUID()`'s text is; what follows is random (and the variant). */
const VERSION_AT = 14

let lastMs = Number.NaN
let lastPrefix = ''

/** A new request id for a request that arrived at `ms` (milliseconds since the epoch). */
export function requestIdAt(ms: number): string {
  // A busy server makes many ids in one millisecond: the time's text is made once for all of them.
  if (ms !== lastMs) {
    const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0')
    lastPrefix = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7`
    lastMs = ms
  }
  return lastPrefix + randomUUID().slice(VERSION_AT + 1)
}

/** The millisecond a request id made by `requestIdAt` names; undefined for any other string. */
export function requestIdTime(id: string): number | undefined {
  if (!V7.test(id)) return undefined
  return Number.parseInt(id.slice(0, 8), 16) * 0x10000 + Number.parseInt(id.slice(9, 13), 16)
}
