/**
 * How the request log is stored (migration 0026): one row per batch of an organisation's entries,
 * not one per request. A row per request cost a catalog request a third of its CPU on SQLite (its
 * insert and three index entries, most of a commit's pages; docs/performance.md), while a batch
 * row costs about what its bytes do. Each row holds:
 *
 * - the batch's dictionaries in text columns (`key_ids`, `routes`, `problems`, `addresses`), which
 *   queries also use to pass over batches that cannot match a filter;
 * - `statuses`, a bit per status class present (bit 2 for 2xx ...), for the same purpose;
 * - `first_at` and `last_at`, the first and last request's time, which place the batch in time;
 * - `data`: the entries, RECORD bytes each, in the order they were answered.
 *
 * An entry's time is the one its request id carries (domain/request-id.ts), so it is not stored
 * twice, and a request id leads to the few batches whose times span it. A batch spans MAX_SPAN_MS
 * at most, which bounds that search.
 */
import type { KeyRecord } from '../domain/api-key.js'

/** One answered request, as the log keeps it. */
export interface RequestLogEntry {
  /** When the request arrived: milliseconds since the epoch, as its request id says. */
  readonly at: number
  readonly organisationId: string
  readonly keyId: string
  readonly method: string
  /** The route template, never the raw path. */
  readonly route: string
  readonly status: number
  /** The problem's code, when the answer was a problem. */
  readonly problem: string | null
  /** Milliseconds, to a tenth. */
  readonly latencyMs: number
  readonly requestId: string
  readonly address: string
}

/** A batch row as it is written (the table's columns but `id`). */
export interface RequestLogBatch {
  readonly organisationId: string
  readonly firstAt: number
  readonly lastAt: number
  readonly entries: number
  readonly statuses: number
  readonly keyIds: string
  readonly routes: string
  readonly problems: string
  readonly addresses: string
  readonly data: Uint8Array
}

/** The longest time between a batch's first and last request. */
export const MAX_SPAN_MS = 60_000
/** Entries per batch at most, so that every dictionary index fits its 16 bits. */
export const MAX_BATCH_ENTRIES = 4096

/**
 * A stored entry's bytes: latency in ms (float32), then its status and the indexes of its key,
 * address, "METHOD route" line and problem (0: none) in the batch's dictionaries (uint16 each),
 * then its request id's 16 bytes. Little-endian.
 */
export const RECORD = 30
const LATENCY = 0
const STATUS = 4
const KEY = 6
const ADDRESS = 8
const ROUTE = 10
const PROBLEM = 12
const REQUEST_ID = 14

/**
 * An entry's bytes in the service's window (services/request-log-window.ts): latency (float32),
 * status and the codes of its route, method and problem (0: none) (uint16 each), the code of its
 * address (uint32), its request id's 16 bytes. Its key is `keys[i]`.
 */
export const WINDOW = {
  RECORD: 32,
  LATENCY: 0,
  STATUS: 4,
  ROUTE: 6,
  METHOD: 8,
  PROBLEM: 10,
  ADDRESS: 12,
  REQUEST_ID: 16,
} as const

/** The entries between two flushes, and what their codes stand for. */
export interface EntryWindow {
  readonly bytes: Uint8Array
  readonly size: number
  /** Each entry's key (a request keeps its key's record, which the key cache holds anyway). */
  readonly keys: readonly KeyRecord[]
  readonly addresses: readonly string[]
  readonly routes: readonly string[]
  readonly methods: readonly string[]
  /** Problem code n is `problems[n - 1]`. */
  readonly problems: readonly string[]
}

/** Each byte's two hexadecimal digits. */
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'))
/** Where a UUID's text has a dash: after its 4th, 6th, 8th and 10th byte. */
const DASH_AFTER = [3, 5, 7, 9].reduce((after, byte) => {
  after[byte] = true
  return after
}, new Array<boolean>(16).fill(false))

/** Each hexadecimal digit's value by its character code (either case); anything else counts as 0. */
const HEX_VALUE = new Uint8Array(128)
for (let digit = 0; digit < 16; digit++) {
  HEX_VALUE[digit.toString(16).charCodeAt(0)] = digit
  HEX_VALUE[digit.toString(16).toUpperCase().charCodeAt(0)] = digit
}
/** Where each byte's two digits start in a UUID's 36 characters. */
const PAIR_AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34]

/**
 * A UUID's 16 bytes into `bytes` at `offset`. Request ids are all UUIDs in their canonical form
 * (domain/request-id.ts); the request path calls this for every entry, so it reads the digits
 * where they must be, with no test of the dashes.
 */
export function writeUuid(bytes: Uint8Array, offset: number, id: string): void {
  for (let i = 0; i < 16; i++) {
    const at = PAIR_AT[i]!
    bytes[offset + i] = (HEX_VALUE[id.charCodeAt(at) & 0x7f]! << 4) | HEX_VALUE[id.charCodeAt(at + 1) & 0x7f]!
  }
}

function readUuid(bytes: Uint8Array, offset: number): string {
  let id = ''
  for (let i = 0; i < 16; i++) id += DASH_AFTER[i] ? `${HEX[bytes[offset + i]!]}-` : HEX[bytes[offset + i]!]
  return id
}

/** The millisecond a UUIDv7's first 48 bits hold. */
function uuidTime(bytes: Uint8Array, offset: number): number {
  let time = 0
  for (let i = 0; i < 6; i++) time = time * 256 + bytes[offset + i]!
  return time
}

/** Entries a step of `encodeSteps` reads or encodes, about a millisecond of work. */
export const ENCODE_STEP = 8192

/**
 * The window's entries as batches, each organisation's in the order they were recorded, made
 * in steps: each yields the batches it made (none while it only sorts the entries), so that the
 * caller can let requests in between (a whole window at once is tens of milliseconds).
 */
export function* encodeSteps(window: EntryWindow, step = ENCODE_STEP): Generator<RequestLogBatch[]> {
  const { bytes, size } = window
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const times = new Float64Array(size)
  // Keys numbered by their records (looked up by identity), each number's organisation once.
  const keyCodes = new Int32Array(size)
  const codeOf = new Map<KeyRecord, number>()
  const keys: KeyRecord[] = []
  const lists: number[][] = []
  const organisations: string[] = []
  const listOfKey: number[] = []
  const listOf = new Map<string, number>()
  for (let i = 0; i < size; i++) {
    if (i > 0 && i % step === 0) yield []
    times[i] = uuidTime(bytes, i * WINDOW.RECORD + WINDOW.REQUEST_ID)
    const key = window.keys[i]!
    let code = codeOf.get(key)
    if (code === undefined) {
      code = keys.push(key) - 1
      codeOf.set(key, code)
      let list = listOf.get(key.organisation.id)
      if (list === undefined) {
        list = lists.push([]) - 1
        organisations.push(key.organisation.id)
        listOf.set(key.organisation.id, list)
      }
      listOfKey[code] = list
    }
    keyCodes[i] = code
    lists[listOfKey[code]!]!.push(i)
  }
  let batches: RequestLogBatch[] = []
  let encoded = 0
  const numbering = numberings(window, keys.length)
  const run = { window, view, times, keyCodes, keys, numbering }
  const add = (organisationId: string, entries: number[]) => {
    batches.push(encode(run, organisationId, entries))
    encoded += entries.length
  }
  for (const [list, entries] of lists.entries()) {
    const organisationId = organisations[list]!
    let start = 0
    let first = times[entries[0]!]!
    let last = first
    for (let j = 1; j < entries.length; j++) {
      const at = times[entries[j]!]!
      const lowest = Math.min(first, at)
      const highest = Math.max(last, at)
      if (j - start === MAX_BATCH_ENTRIES || highest - lowest > MAX_SPAN_MS) {
        add(organisationId, entries.slice(start, j))
        start = j
        first = at
        last = at
      } else {
        first = lowest
        last = highest
      }
    }
    add(organisationId, start === 0 ? entries : entries.slice(start))
    if (encoded >= step) {
      yield batches
      batches = []
      encoded = 0
    }
  }
  yield batches
}

/** The window's entries as batches, all at once (encodeSteps's steps together). */
export function encodeBatches(window: EntryWindow): RequestLogBatch[] {
  return [...encodeSteps(window, Number.POSITIVE_INFINITY)].flat()
}

/**
 * Window codes numbered again, from 0, in the order a batch meets them. Kept for a whole flush:
 * `next` starts the next batch, with no allocation (a code is unseen unless stamped with the
 * batch's number).
 */
class Renumbering {
  readonly #stamps: Int32Array
  readonly #numbers: Int32Array
  #batch = 0
  codes: number[] = []
  constructor(size: number) {
    this.#stamps = new Int32Array(size)
    this.#numbers = new Int32Array(size)
  }
  next(): void {
    this.#batch++
    this.codes = []
  }
  of(code: number): number {
    if (this.#stamps[code] !== this.#batch) {
      this.#stamps[code] = this.#batch
      this.#numbers[code] = this.codes.length
      this.codes.push(code)
    }
    return this.#numbers[code]!
  }
}

/** The numbering of each dictionary, for a window's batches one after the other. */
interface Numberings {
  keys: Renumbering
  routes: Renumbering
  problems: Renumbering
  addresses: Renumbering
}

function numberings(window: EntryWindow, keys: number): Numberings {
  return {
    keys: new Renumbering(keys),
    // A route and a method together make one line: its code is both codes in one number.
    routes: new Renumbering(window.routes.length * window.methods.length),
    problems: new Renumbering(window.problems.length + 1),
    addresses: new Renumbering(window.addresses.length),
  }
}

/** A window being made into batches, with its keys numbered. */
interface Encoding {
  window: EntryWindow
  view: DataView
  times: Float64Array
  keyCodes: Int32Array
  keys: KeyRecord[]
  numbering: Numberings
}

function encode(run: Encoding, organisationId: string, entries: number[]): RequestLogBatch {
  const { window, view, times, keyCodes, numbering } = run
  const { keys, routes, problems, addresses } = numbering
  for (const renumbering of [keys, routes, problems, addresses]) renumbering.next()
  const methods = window.methods.length
  const data = new Uint8Array(entries.length * RECORD)
  const out = new DataView(data.buffer)
  let statuses = 0
  let firstAt = Number.POSITIVE_INFINITY
  let lastAt = Number.NEGATIVE_INFINITY
  for (let j = 0; j < entries.length; j++) {
    const i = entries[j]!
    const at = times[i]!
    const from = i * WINDOW.RECORD
    const to = j * RECORD
    const status = view.getUint16(from + WINDOW.STATUS, true)
    const problem = view.getUint16(from + WINDOW.PROBLEM, true)
    const route = view.getUint16(from + WINDOW.ROUTE, true) * methods + view.getUint16(from + WINDOW.METHOD, true)
    if (at < firstAt) firstAt = at
    if (at > lastAt) lastAt = at
    statuses |= 1 << Math.min(Math.floor(status / 100), 9)
    out.setFloat32(to + LATENCY, view.getFloat32(from + WINDOW.LATENCY, true), true)
    out.setUint16(to + STATUS, status, true)
    out.setUint16(to + KEY, keys.of(keyCodes[i]!), true)
    out.setUint16(to + ADDRESS, addresses.of(view.getUint32(from + WINDOW.ADDRESS, true)), true)
    out.setUint16(to + ROUTE, routes.of(route), true)
    out.setUint16(to + PROBLEM, problem === 0 ? 0 : problems.of(problem) + 1, true)
    for (let k = 0; k < 16; k += 4)
      out.setUint32(to + REQUEST_ID + k, view.getUint32(from + WINDOW.REQUEST_ID + k, true), true)
  }
  return {
    organisationId,
    firstAt,
    lastAt,
    entries: entries.length,
    statuses,
    keyIds: keys.codes.map((code) => run.keys[code]!.keyId).join(' '),
    routes: routes.codes
      .map((code) => `${window.methods[code % methods]} ${window.routes[Math.floor(code / methods)]}`)
      .join('\n'),
    problems: problems.codes.map((code) => window.problems[code - 1]).join(' '),
    addresses: addresses.codes.map((code) => window.addresses[code]).join(' '),
    data,
  }
}

/** A stored batch as read back. */
export interface StoredBatch extends RequestLogBatch {
  readonly id: number
}

/** The batch's entries, in the order they were answered. */
export function decodeBatch(batch: StoredBatch): RequestLogEntry[] {
  const keys = batch.keyIds.split(' ')
  const routes = batch.routes.split('\n').map((line) => {
    const space = line.indexOf(' ')
    return { method: line.slice(0, space), route: line.slice(space + 1) }
  })
  const problems = batch.problems === '' ? [] : batch.problems.split(' ')
  const addresses = batch.addresses.split(' ')
  const bytes = batch.data
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const entries: RequestLogEntry[] = []
  for (let offset = 0; offset + RECORD <= bytes.byteLength; offset += RECORD) {
    const problem = view.getUint16(offset + PROBLEM, true)
    const { method, route } = routes[view.getUint16(offset + ROUTE, true)]!
    entries.push({
      at: uuidTime(bytes, offset + REQUEST_ID),
      organisationId: batch.organisationId,
      keyId: keys[view.getUint16(offset + KEY, true)]!,
      method,
      route,
      status: view.getUint16(offset + STATUS, true),
      problem: problem === 0 ? null : problems[problem - 1]!,
      latencyMs: Math.round(view.getFloat32(offset + LATENCY, true) * 10) / 10,
      requestId: readUuid(bytes, offset + REQUEST_ID),
      address: addresses[view.getUint16(offset + ADDRESS, true)]!,
    })
  }
  return entries
}
