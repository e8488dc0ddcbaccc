/**
 * Whether a small group commit should wait a moment for company (group-commit.ts).
 *
 * A SQLite commit costs about the same whatever it carries, and for a write alone in its
 * transaction the commit's own system calls (the WAL frames written one by one, the
 * shared-memory locks) are most of its CPU. Under a closed loop the batches are large by
 * themselves. Requests that arrive paced, one at a time (an open loop, many independent
 * clients), each get a commit of their own, which costs the core more, and lengthens the tail
 * more, than a short wait for company (figures: docs/performance.md).
 *
 * Waiting helps only when others are about to write. Clients that each wait for their own
 * answer before sending again are all in the batch already: a wait gains nothing and slows each
 * of them by the wait. So a small batch waits only when
 *
 * - the event loop is busy (CPU saved matters; at low load a wait would only add latency),
 * - and recent waits were joined, on average, by at least one more unit (a moving average of
 *   the units that arrived during each wait). When waits stop paying, they stop; a probe, at
 *   most one every `PROBE_INTERVAL_MS`, keeps the average current while nobody waits, so that
 *   clients enrolling in a loop make as many enrolls with this as without.
 *
 * The wait itself is the shortest timer Node has (about a millisecond).
 */
import { performance } from 'node:perf_hooks'

/** Batches of this many units or more commit at once: the commit's cost is already shared. */
export const SMALL_BATCH = 4
/** Event-loop utilization from which CPU is worth saving. */
export const BUSY = 0.5
/** The moving average of joiners per wait below which waiting stops. */
export const WORTH_WAITING = 1
/** Weight of the latest wait in the moving average. */
const WEIGHT = 1 / 8
/** While waits do not pay, one in this many ms still waits, to see whether they would now. */
export const PROBE_INTERVAL_MS = 250
/** How long an event-loop utilization reading stands. */
const BUSY_SAMPLE_MS = 100

export interface CommitHoldOptions {
  /** Milliseconds, monotonic. */
  now?: () => number
  /** The event loop's recent utilization, 0 to 1. */
  busy?: () => number
}

/** What the write queue asks (CommitHold; tests pass their own). */
export interface CommitPolicy {
  /** Whether a batch of `size` units, due now, should wait for company. */
  shouldHold(size: number): boolean
  /** After a batch waited: how many units joined it meanwhile. */
  held(joined: number): void
}

export class CommitHold implements CommitPolicy {
  readonly #now: () => number
  readonly #busy: () => number
  /** Units that joined a wait, on average (moving). */
  #joiners = 0
  #lastProbe = Number.NEGATIVE_INFINITY

  constructor(options: CommitHoldOptions = {}) {
    this.#now = options.now ?? (() => performance.now())
    this.#busy = options.busy ?? eventLoopBusy()
  }

  /** Whether a batch of `size` units, due now, should wait for company. */
  shouldHold(size: number): boolean {
    if (size >= SMALL_BATCH || this.#busy() < BUSY) return false
    if (this.#joiners >= WORTH_WAITING) return true
    const now = this.#now()
    if (now - this.#lastProbe < PROBE_INTERVAL_MS) return false
    this.#lastProbe = now
    return true
  }

  /** After a batch waited: how many units joined it meanwhile. */
  held(joined: number): void {
    this.#joiners += (joined - this.#joiners) * WEIGHT
  }

  /** The moving average of units that joined a wait (for tests). */
  get joiners(): number {
    return this.#joiners
  }
}

/** The event loop's utilization over the last reading's interval, read again at most every BUSY_SAMPLE_MS. */
function eventLoopBusy(): () => number {
  let last = performance.eventLoopUtilization()
  let lastAt = performance.now()
  let utilization = 0
  return () => {
    const now = performance.now()
    if (now - lastAt >= BUSY_SAMPLE_MS) {
      const current = performance.eventLoopUtilization()
      utilization = performance.eventLoopUtilization(current, last).utilization
      last = current
      lastAt = now
    }
    return utilization
  }
}
