/**
 * The times of each key's recent hits, for the sliding-window limiter, kept in one Float64Array
 * instead of an object and an array per key. With tens of thousands of keys, a key holding one
 * time costs its map entry and 24 bytes instead of about 130; a busy key's times sit in a block
 * at most half as large again as they need.
 *
 * Each key has a slot (its block's start and size class, the offset of its oldest time in the
 * block, how many it holds). Times are kept in order, oldest first: expired ones are skipped by
 * moving the offset, and the live ones are moved down when the block's end is reached. Blocks
 * come in size classes (1, 2, 3, 4, 6, 8, ... up to the most a key may hold); a block that is
 * outgrown goes to its class's free list for another key, and `sweep` rebuilds the store when
 * free blocks outweigh the live ones.
 */
const NONE = -1

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
  #blockStart = new Int32Array(64)
  #blockClass = new Uint8Array(64)
  #first = new Int32Array(64)
  #held = new Int32Array(64)
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

  /** Starts a log for a key that has none, holding `time`. */
  add(key: string, time: number): void {
    const slot = this.#freeSlots.pop() ?? this.#newSlot()
    this.#keys[slot] = key
    this.#slots.set(key, slot)
    this.#blockClass[slot] = 0
    this.#blockStart[slot] = this.#allocate(0)
    this.#first[slot] = 0
    this.#held[slot] = 1
    this.#times[this.#blockStart[slot]!] = time
  }

  /** Drops the times at or before `cutoff`; returns how many the log still holds. */
  expire(slot: number, cutoff: number): number {
    const start = this.#blockStart[slot]!
    let first = this.#first[slot]!
    let held = this.#held[slot]!
    while (held > 0 && this.#times[start + first]! <= cutoff) {
      first++
      held--
    }
    this.#first[slot] = held === 0 ? 0 : first
    this.#held[slot] = held
    return held
  }

  /** The oldest time held, or undefined for an empty log. */
  oldest(slot: number): number | undefined {
    return this.#held[slot] === 0 ? undefined : this.#times[this.#blockStart[slot]! + this.#first[slot]!]
  }

  newest(slot: number): number | undefined {
    const held = this.#held[slot]!
    return held === 0 ? undefined : this.#times[this.#blockStart[slot]! + this.#first[slot]! + held - 1]
  }

  /** Appends `time` (no earlier than the newest); the caller keeps a log within `maxHits`. */
  push(slot: number, time: number): void {
    const held = this.#held[slot]!
    const size = this.#sizes[this.#blockClass[slot]!]!
    if (this.#first[slot]! + held === size) {
      if (held === size) this.#grow(slot)
      else this.#moveDown(slot)
    }
    this.#times[this.#blockStart[slot]! + this.#first[slot]! + held] = time
    this.#held[slot] = held + 1
  }

  /** Removes the newest occurrence of `time`; false if the log holds none. */
  removeLatest(slot: number, time: number): boolean {
    const from = this.#blockStart[slot]! + this.#first[slot]!
    const held = this.#held[slot]!
    for (let i = from + held - 1; i >= from; i--) {
      if (this.#times[i] !== time) continue
      this.#times.copyWithin(i, i + 1, from + held)
      this.#held[slot] = held - 1
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
      this.#release(this.#blockStart[slot]!, this.#blockClass[slot]!)
      this.#freeSlots.push(slot)
    }
    if (this.#freeTimes > 1024 && this.#freeTimes * 2 > this.#top) this.#rebuild(cutoff)
  }

  #newSlot(): number {
    const slot = this.#keys.length
    this.#keys.push(undefined)
    if (slot === this.#held.length) {
      this.#blockStart = copy(this.#blockStart, new Int32Array(slot * 2))
      this.#blockClass = copy(this.#blockClass, new Uint8Array(slot * 2))
      this.#first = copy(this.#first, new Int32Array(slot * 2))
      this.#held = copy(this.#held, new Int32Array(slot * 2))
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
    const start = this.#blockStart[slot]!
    const first = this.#first[slot]!
    this.#times.copyWithin(start, start + first, start + first + this.#held[slot]!)
    this.#first[slot] = 0
  }

  /** Moves a full log to a block of the next size class. */
  #grow(slot: number): void {
    const sizeClass = this.#blockClass[slot]!
    const start = this.#blockStart[slot]!
    const from = start + this.#first[slot]!
    const held = this.#held[slot]!
    const to = this.#allocate(sizeClass + 1)
    // #allocate may have replaced the array; read from the current one.
    this.#times.copyWithin(to, from, from + held)
    this.#release(start, sizeClass)
    this.#blockStart[slot] = to
    this.#blockClass[slot] = sizeClass + 1
    this.#first[slot] = 0
  }

  /** Packs the live logs into a new array, each in the smallest class that holds its live times. */
  #rebuild(cutoff: number): void {
    const old = this.#times
    const logs = [...this.#slots.values()].map((slot) => {
      this.expire(slot, cutoff)
      return { slot, from: this.#blockStart[slot]! + this.#first[slot]!, held: this.#held[slot]! }
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
      this.#blockStart[slot] = to
      this.#blockClass[slot] = sizeClass
      this.#first[slot] = 0
    }
  }
}

function copy<T extends Float64Array | Int32Array | Uint8Array>(from: T, to: T): T {
  to.set(from as ArrayLike<number>)
  return to
}
