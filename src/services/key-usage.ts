/**
 * Per-key bookkeeping kept off the request path: when each key was last used, and how many
 * requests it made per UTC day (and how many were refused with 429).
 *
 * Counted in memory and written by `flush` in small chunks, each one unit of the write queue:
 * on SQLite every write runs on the event loop and holds the one connection, so a chunk joins
 * the requests' own group commit and a request waits behind at most one chunk, never behind the
 * whole flush, which for many keys is long (figures: docs/performance.md). "Last used" is
 * written at most once per key per LAST_USED_PRECISION_MS, which is the precision the dashboard
 * shows.
 *
 * Each key seen gets a slot: its numbers sit in typed arrays, smaller than an object and map
 * entries per key, and a flush walks the slots instead of copying everything first, so starting
 * a flush costs no pause of its own.
 */
import type { Clock } from '../clock.js'
import { clientFamily } from '../domain/user-agent.js'
import { type LastUse, touchKeys } from '../storage/access-repository.js'
import type { Storage } from '../storage/connection.js'
import { addUsage, type DailyCount } from '../storage/usage-repository.js'
import { SerialFlush } from './serial-flush.js'

export const LAST_USED_PRECISION_MS = 5 * 60_000
/** Keys per chunk: one statement each, so a chunk stays around a millisecond on SQLite. */
export const USAGE_CHUNK = 64
const DAY_MS = 86_400_000
const INITIAL_SLOTS = 1024

/**
 * Where a key id sorts among the others, by its first two characters (6 bits of each, which keep
 * hexadecimal digits apart). A flush writes keys region by region, so each chunk writes neighbouring
 * entries of the (key_id, day) index together and touches a few index pages instead of one per
 * key, which shrinks the write-ahead log of a flush several times (docs/performance.md).
 */
function indexRegion(keyId: string): number {
  return ((keyId.charCodeAt(0) & 0x3f) << 6) | (keyId.charCodeAt(1) & 0x3f)
}
const REGIONS = 1 << 12

/** Rows in index-region order (a counting sort, no pause even for a whole day's 50,000). */
function inIndexOrder(rows: readonly DailyCount[]): DailyCount[] {
  const starts = new Int32Array(REGIONS + 1)
  for (const row of rows) starts[indexRegion(row.keyId) + 1]!++
  for (let region = 0; region < REGIONS; region++) starts[region + 1]! += starts[region]!
  const ordered = new Array<DailyCount>(rows.length)
  for (const row of rows) ordered[starts[indexRegion(row.keyId)]!++] = row
  return ordered
}

/** A slot's numbers in KeyUsage's #numbers. */
const FIELDS = 4
const LAST_USED = 0
const WRITTEN = 1
const REQUESTS = 2
const THROTTLED = 3

/** Numbers for `slots` slots, each with nothing to write and nothing written. */
function emptySlots(slots: number): Float64Array {
  const numbers = new Float64Array(slots * FIELDS)
  for (let slot = 0; slot < slots; slot++) {
    numbers[slot * FIELDS + LAST_USED] = Number.NaN
    numbers[slot * FIELDS + WRITTEN] = Number.NaN
  }
  return numbers
}

/** A column twice as long, the new half set to `empty`. */
function doubled(column: Int32Array, empty: number) {
  const longer = new Int32Array(column.length * 2)
  longer.set(column)
  longer.fill(empty, column.length)
  return longer
}

export class KeyUsage {
  readonly #storage: Pick<Storage, 'writes' | 'keysInRowOrder'>
  readonly #clock: Clock
  readonly #slots = new Map<string, number>()
  readonly #keyIds: string[] = []
  /**
   * Per slot, side by side (FIELDS numbers from slot * FIELDS), as a request updates them
   * together (one cache line, not one per array): when the key was last used, while that still
   * has to be written (NaN: nothing to write); the last-used time written to storage (NaN: none
   * yet); today's requests and 429s not yet written.
   */
  #numbers = emptySlots(INITIAL_SLOTS)
  /** Per slot, the client address and User-Agent of the key's latest request, written with its last use. */
  readonly #addresses: (string | undefined)[] = []
  readonly #agents: (string | undefined)[] = []
  /** The slots of each index region as a list (first, last, and each slot's next; -1 ends it). */
  readonly #regionFirst = new Int32Array(REGIONS).fill(-1)
  readonly #regionLast = new Int32Array(REGIONS).fill(-1)
  #nextInRegion = new Int32Array(INITIAL_SLOTS)
  /** Counts of earlier days, or of a failed chunk, waiting to be written. */
  #pending: DailyCount[] = []
  #day = ''
  #dayEnds = 0
  readonly #flushes = new SerialFlush(() => this.#write())

  /** Writes go through `storage.writes`, in the order `storage.keysInRowOrder` gives. */
  constructor(storage: Pick<Storage, 'writes' | 'keysInRowOrder'>, clock: Clock) {
    this.#storage = storage
    this.#clock = clock
  }

  /** One authenticated request by the key; `throttled` when it was refused with 429. */
  count(keyId: string, throttled: boolean, now = this.#clock.now()): void {
    if (now >= this.#dayEnds) this.#newDay(now)
    const slot = this.#slots.get(keyId) ?? this.#add(keyId)
    const numbers = this.#numbers
    const at = slot * FIELDS
    const written = numbers[at + WRITTEN]!
    if (Number.isNaN(written) || now - written >= LAST_USED_PRECISION_MS) numbers[at + LAST_USED] = now
    numbers[at + REQUESTS]!++
    if (throttled) numbers[at + THROTTLED]!++
  }

  /**
   * The client of the key's latest request (counted by `count`); what the flush writes with the
   * key's last use. Two stores per request: the family is worked out at the flush.
   */
  noteClient(keyId: string, address: string, userAgent: string | undefined): void {
    const slot = this.#slots.get(keyId)
    if (slot === undefined) return
    this.#addresses[slot] = address
    this.#agents[slot] = userAgent
  }

  #add(keyId: string): number {
    const slot = this.#keyIds.length
    if (slot * FIELDS === this.#numbers.length) {
      const numbers = emptySlots(slot * 2)
      numbers.set(this.#numbers)
      this.#numbers = numbers
      this.#nextInRegion = doubled(this.#nextInRegion, -1)
    }
    this.#keyIds.push(keyId)
    this.#slots.set(keyId, slot)
    const region = indexRegion(keyId)
    this.#nextInRegion[slot] = -1
    if (this.#regionLast[region] === -1) this.#regionFirst[region] = slot
    else this.#nextInRegion[this.#regionLast[region]!] = slot
    this.#regionLast[region] = slot
    return slot
  }

  /** Every slot, region by region; slots added meanwhile are met if their region is still ahead. */
  *#inIndexOrder(): Generator<number> {
    for (let region = 0; region < REGIONS; region++) {
      for (let slot = this.#regionFirst[region]!; slot !== -1; slot = this.#nextInRegion[slot]!) yield slot
    }
  }

  /** Counts belong to the day they happened: a new day starts from zero, the old counts wait for the flush. */
  #newDay(now: number): void {
    const day = new Date(now).toISOString().slice(0, 10)
    if (this.#day !== '' && day !== this.#day) {
      for (let slot = 0; slot < this.#keyIds.length; slot++) {
        if (this.#numbers[slot * FIELDS + REQUESTS] === 0) continue
        this.#pending.push(this.#take(slot, this.#day))
      }
    }
    this.#day = day
    this.#dayEnds = Math.floor(now / DAY_MS) * DAY_MS + DAY_MS
  }

  /** The slot's counts as a row for `day`; the slot starts again from zero. */
  #take(slot: number, day: string): DailyCount {
    const row = {
      keyId: this.#keyIds[slot]!,
      day,
      requests: this.#numbers[slot * FIELDS + REQUESTS]!,
      throttled: this.#numbers[slot * FIELDS + THROTTLED]!,
    }
    this.#numbers[slot * FIELDS + REQUESTS] = 0
    this.#numbers[slot * FIELDS + THROTTLED] = 0
    return row
  }

  /**
   * Writes everything counted before the call; rejects if a chunk could not be written (what
   * was not written waits for the next flush). A flush under way may have passed keys counted
   * since it began, so a call meanwhile waits for it and then writes what is left (the final
   * flush on close must not miss the requests of the last seconds).
   */
  flush(): Promise<void> {
    return this.#flushes.run()
  }

  /**
   * Last-used times first (in the order their rows sit in the table), then counts (earlier days
   * first, then region by region of the key-id index). A chunk takes its keys' values when its
   * turn comes, so what they counted since the flush began goes too, and a failed chunk leaves
   * the keys after it as they are.
   */
  async #write(): Promise<void> {
    const due: string[] = []
    for (let slot = 0; slot < this.#keyIds.length; slot++) {
      if (!Number.isNaN(this.#numbers[slot * FIELDS + LAST_USED]!)) due.push(this.#keyIds[slot]!)
    }
    let touched = new Map<string, LastUse>()
    for (const keyId of await this.#storage.keysInRowOrder(due)) {
      const slot = this.#slots.get(keyId)!
      const at = this.#numbers[slot * FIELDS + LAST_USED]!
      if (Number.isNaN(at)) continue
      this.#numbers[slot * FIELDS + LAST_USED] = Number.NaN
      touched.set(keyId, { at, address: this.#addresses[slot] ?? '', agent: clientFamily(this.#agents[slot]) })
      if (touched.size === USAGE_CHUNK) {
        await this.#writeLastUsed(touched)
        touched = new Map()
      }
    }
    await this.#writeLastUsed(touched)
    await this.#writePending()
    let counted: DailyCount[] = []
    for (const slot of this.#inIndexOrder()) {
      if (this.#numbers[slot * FIELDS + REQUESTS] === 0) continue
      counted.push(this.#take(slot, this.#day))
      if (counted.length === USAGE_CHUNK) {
        await this.#writeCounts(counted, [])
        counted = []
      }
    }
    await this.#writeCounts(counted, [])
    // A day that ended during the flush moved its counts here.
    await this.#writePending()
  }

  async #writeLastUsed(chunk: Map<string, LastUse>): Promise<void> {
    if (chunk.size === 0) return
    try {
      await this.#storage.writes.statement((db) => touchKeys(db, chunk))
    } catch (error) {
      // Unless the key was used again meanwhile, its time waits for the next flush.
      for (const [keyId, { at }] of chunk) {
        const slot = this.#slots.get(keyId)!
        if (Number.isNaN(this.#numbers[slot * FIELDS + LAST_USED]!)) this.#numbers[slot * FIELDS + LAST_USED] = at
      }
      throw error
    }
    for (const [keyId, { at }] of chunk) this.#numbers[this.#slots.get(keyId)! * FIELDS + WRITTEN] = at
  }

  async #writePending(): Promise<void> {
    const rows = inIndexOrder(this.#pending)
    this.#pending = []
    for (let start = 0; start < rows.length; start += USAGE_CHUNK) {
      await this.#writeCounts(rows.slice(start, start + USAGE_CHUNK), rows.slice(start + USAGE_CHUNK))
    }
  }

  /** On failure the chunk (and `rest`, rows no slot holds any more) wait for the next flush. */
  async #writeCounts(chunk: DailyCount[], rest: DailyCount[]): Promise<void> {
    if (chunk.length === 0) return
    try {
      await this.#storage.writes.statement((db) => addUsage(db, chunk))
    } catch (error) {
      this.#pending.push(...chunk, ...rest)
      throw error
    }
  }
}
