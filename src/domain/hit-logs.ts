/**
 * The times of each key's recent hits, for the sliding-window limiter, kept in one Float64Array
 * instead of an object and an array per key, whose overhead outweighed the times themselves
 * with tens of thousands of keys (figures: docs/performance.md); a busy key's times sit in a
 * block at most half as large again as they need.
 *
 * Each key has a slot (its block's start and size class, the offset of its oldest time in the
 * block, how many it holds). Times are kept in order, oldest first: expired ones are skipped by
 * moving the offset, and the live ones are moved down when the block's end is reached. Blocks
 * come in size classes (1, 2, 3, 4, 6, 8, ... up to the most a key may hold); a block that is
 * outgrown goes to its class's free list for another key, and `sweep` rebuilds the store when
 * free blocks outweigh the live ones.
 */
const NONE = -1
/** A slot's numbers in #meta: block start, size class, offset of the oldest time, times held. */
const FIELDS = 4
const START = 0
const CLASS = 1
const FIRST = 2
const HELD = 3

function sizeClasses(maxHits: number): number[] {
  const sizes = [1, 2]
  while (sizes.at(-1)! < maxHits) {
    const last = sizes.at(-1)!
    // Powers of two and one and a half times them: a block is never more than a third unused.
    sizes.push(last === 1 || (last & (last - 1)) === 0 ? last + last / 2 : (last / 3) * 4)
  }
  sizes[sizes.length - 1] = Math.max(maxHits, 1)
  return sizes
}

export class HitLogs {
  readonly #sizes: readonly number[]
  readonly #slots = new Map<string, number>()
  #keys: (string | undefined)[] = []
  #freeSlots: number[] = []
  /**
   * Per slot, side by side (FIELDS numbers from slot * FIELDS): its block's start and size class,
   * the offset of its oldest time in the block, and how many it holds. One place per slot rather
   * than one array per field: a request reads all four, and with tens of thousands of keys each
   * array read was a cache miss of its own. Replaced by a larger one only when a slot is added.
   */
  #meta = new Int32Array(64 * FIELDS)
  #times = new Float64Array(256)
  /** First index of #times never handed out. */
  #top = 0
  /** Free block starts, per size class. */
  #freeBlocks: number[][]
  #freeTimes = 0

  /** `maxHits`: the most times one key ever holds (the limit). */
  constructor(maxHits: number) {
    this.#sizes = sizeClasses(maxHits)
    this.#freeBlocks = this.#sizes.map(() => [])
  }

  get size(): number {
    return this.#slots.size
  }

  /** The key's slot, or -1 if it has no log. */
  slot(key: string): number {
    return this.#slots.get(key) ?? NONE
  }

  /** Starts a log for a key that has none, holding `time`; returns its slot. */
  add(key: string, time: number): number {
    const slot = this.#freeSlots.pop() ?? this.#newSlot()
    this.#keys[slot] = key
    this.#slots.set(key, slot)
    const at = slot * FIELDS
    const start = this.#allocate(0)
    this.#meta[at + START] = start
    this.#meta[at + CLASS] = 0
    this.#meta[at + FIRST] = 0
    this.#meta[at + HELD] = 1
    this.#times[start] = time
    return slot
  }

  /** Drops the times at or before `cutoff`; returns how many the log still holds. */
  expire(slot: number, cutoff: number): number {
    const meta = this.#meta
    const at = slot * FIELDS
    const start = meta[at + START]!
    let first = meta[at + FIRST]!
    let held = meta[at + HELD]!
    while (held > 0 && this.#times[start + first]! <= cutoff) {
      first++
      held--
    }
    meta[at + FIRST] = held === 0 ? 0 : first
    meta[at + HELD] = held
    return held
  }

  /** The oldest time held, or undefined for an empty log. */
  oldest(slot: number): number | undefined {
    const meta = this.#meta
    const at = slot * FIELDS
    return meta[at + HELD] === 0 ? undefined : this.#times[meta[at + START]! + meta[at + FIRST]!]
  }

  newest(slot: number): number | undefined {
    const meta = this.#meta
    const at = slot * FIELDS
    const held = meta[at + HELD]!
    return held === 0 ? undefined : this.#times[meta[at + START]! + meta[at + FIRST]! + held - 1]
  }

  /** Appends `time` (no earlier than the newest); the caller keeps a log within `maxHits`. */
  push(slot: number, time: number): void {
    const meta = this.#meta
    const at = slot * FIELDS
    const held = meta[at + HELD]!
    const size = this.#sizes[meta[at + CLASS]!]!
    if (meta[at + FIRST]! + held === size) {
      if (held === size) this.#grow(slot)
      else this.#moveDown(slot)
    }
    this.#times[meta[at + START]! + meta[at + FIRST]! + held] = time
    meta[at + HELD] = held + 1
  }

  /** Removes the newest occurrence of `time`; false if the log holds none. */
  removeLatest(slot: number, time: number): boolean {
    const meta = this.#meta
    const at = slot * FIELDS
    const from = meta[at + START]! + meta[at + FIRST]!
    const held = meta[at + HELD]!
    for (let i = from + held - 1; i >= from; i--) {
      if (this.#times[i] !== time) continue
      this.#times.copyWithin(i, i + 1, from + held)
      meta[at + HELD] = held - 1
      return true
    }
    return false
  }

  /** Forgets every log whose newest time is at or before `cutoff`; then rebuilds if mostly free. */
  sweep(cutoff: number): void {
    for (const [key, slot] of this.#slots) {
      const newest = this.newest(slot)
      if (newest !== undefined && newest > cutoff) continue
      this.#slots.delete(key)
      this.#keys[slot] = undefined
      this.#release(this.#meta[slot * FIELDS + START]!, this.#meta[slot * FIELDS + CLASS]!)
      this.#freeSlots.push(slot)
    }
    if (this.#freeTimes > 1024 && this.#freeTimes * 2 > this.#top) this.#rebuild(cutoff)
  }

  #newSlot(): number {
    const slot = this.#keys.length
    this.#keys.push(undefined)
    if (slot * FIELDS === this.#meta.length) {
      this.#meta = copy(this.#meta, new Int32Array(slot * 2 * FIELDS))
    }
    return slot
  }

  #allocate(sizeClass: number): number {
    const free = this.#freeBlocks[sizeClass]!.pop()
    const size = this.#sizes[sizeClass]!
    if (free !== undefined) {
      this.#freeTimes -= size
      return free
    }
    if (this.#top + size > this.#times.length) {
      this.#times = copy(this.#times, new Float64Array(Math.max(this.#times.length * 2, this.#top + size)))
    }
    this.#top += size
    return this.#top - size
  }

  #release(start: number, sizeClass: number): void {
    this.#freeBlocks[sizeClass]!.push(start)
    this.#freeTimes += this.#sizes[sizeClass]!
  }

  /** Moves the held times to the start of the block. */
  #moveDown(slot: number): void {
    const meta = this.#meta
    const at = slot * FIELDS
    const start = meta[at + START]!
    const first = meta[at + FIRST]!
    this.#times.copyWithin(start, start + first, start + first + meta[at + HELD]!)
    meta[at + FIRST] = 0
  }

  /** Moves a full log to a block of the next size class. */
  #grow(slot: number): void {
    const meta = this.#meta
    const at = slot * FIELDS
    const sizeClass = meta[at + CLASS]!
    const start = meta[at + START]!
    const from = start + meta[at + FIRST]!
    const held = meta[at + HELD]!
    const to = this.#allocate(sizeClass + 1)
    // #allocate may have replaced #times (never #meta); read from the current one.
    this.#times.copyWithin(to, from, from + held)
    this.#release(start, sizeClass)
    meta[at + START] = to
    meta[at + CLASS] = sizeClass + 1
    meta[at + FIRST] = 0
  }

  /** Packs the live logs into a new array, each in the smallest class that holds its live times. */
  #rebuild(cutoff: number): void {
    const old = this.#times
    const logs = [...this.#slots.values()].map((slot) => {
      this.expire(slot, cutoff)
      return {
        slot,
        from: this.#meta[slot * FIELDS + START]! + this.#meta[slot * FIELDS + FIRST]!,
        held: this.#meta[slot * FIELDS + HELD]!,
      }
    })
    this.#times = new Float64Array(Math.max(256, this.#times.length / 2))
    this.#top = 0
    this.#freeBlocks = this.#sizes.map(() => [])
    this.#freeTimes = 0
    for (const { slot, from, held } of logs) {
      const sizeClass = Math.max(
        0,
        this.#sizes.findIndex((size) => size >= held),
      )
      const to = this.#allocate(sizeClass)
      this.#times.set(old.subarray(from, from + held), to)
      this.#meta[slot * FIELDS + START] = to
      this.#meta[slot * FIELDS + CLASS] = sizeClass
      this.#meta[slot * FIELDS + FIRST] = 0
    }
  }
}

function copy<T extends Float64Array | Int32Array>(from: T, to: T): T {
  to.set(from as ArrayLike<number>)
  return to
}
