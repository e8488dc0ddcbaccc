/**
 * The one source of "now" for everything that depends on time (rate windows, key expiry,
 * agreement validity, timestamps written to storage). Tests pass a manual clock instead of
 * sleeping through windows.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number
}

export const systemClock: Clock = Object.freeze({ now: () => Date.now() })

/** A clock that only moves when told to; for tests and simulations. */
export class ManualClock implements Clock {
  #now: number
  constructor(start: number | string = Date.UTC(2026, 0, 15, 9, 0, 0)) {
    this.#now = typeof start === 'string' ? Date.parse(start) : start
  }
  now(): number {
    return this.#now
  }
  advance(ms: number): void {
    this.#now += ms
  }
  set(ms: number | string): void {
    this.#now = typeof ms === 'string' ? Date.parse(ms) : ms
  }
}

let lastMs = Number.NaN
let lastIso = ''

/**
 * ISO 8601 UTC with milliseconds, the only timestamp format stored and served. The last answer
 * is kept: a busy server asks for the same millisecond many times (a request's disclosure
 * record, its change and its answer), and a new Date each time costs far more than comparing a
 * number (figures: docs/performance.md).
 */
export function isoAt(ms: number): string {
  if (ms !== lastMs) {
    // Throws for a time no Date can hold, as before; NaN never equals lastMs.
    lastIso = new Date(ms).toISOString()
    lastMs = ms
  }
  return lastIso
}
