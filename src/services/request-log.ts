/**
 * The request log (docs/request-log.md): one entry per API request answered to an organisation's
 * key, kept in memory on the request path (as bytes: request-log-window.ts) and written by `flush`
 * off it: the window is swapped for a second one, made into batches (storage/request-log-batches.ts)
 * a step per turn of the event loop, and written chunk by chunk, each one unit of the write queue:
 * on SQLite a chunk joins the requests' own group commit, so a request waits behind at most one
 * step or chunk (about a millisecond), never behind the whole flush.
 *
 * Started, it flushes every REQUEST_LOG_FLUSH_MS, and at once when FLUSH_AT entries wait. What
 * storage cannot take waits, up to `limit` entries in all; past that, new entries are dropped and
 * counted (`dropped`), and a warning says so at most once a minute, then once more when the log is
 * written again.
 */
import { setImmediate as turn } from 'node:timers/promises'
import type { FastifyBaseLogger } from 'fastify'
import type { KeyRecord } from '../domain/api-key.js'
import { encodeSteps, type RequestLogBatch } from '../storage/request-log-batches.js'
import { appendRequestLog, REQUEST_LOG_ROWS_PER_STATEMENT } from '../storage/request-log-repository.js'
import type { WriteQueue } from '../storage/write-queue.js'
import { EntryWindowBuffer } from './request-log-window.js'
import { SerialFlush } from './serial-flush.js'

/** How often each instance writes what it holds (figures: docs/performance.md, "The request log"). */
export const REQUEST_LOG_FLUSH_MS = 10_000
/** Entries per statement at most (a batch larger than that goes alone): about 30 KB of rows. */
export const REQUEST_LOG_CHUNK = 1024
/** Entries held at most, written or waiting (32 bytes each in a window, about 30 in a batch). */
export const REQUEST_LOG_LIMIT = 400_000
/** Entries in the window that start a flush before its time. */
const FLUSH_AT = REQUEST_LOG_LIMIT / 4
const REPORT_EVERY_MS = 60_000

export interface RequestLogOptions {
  writes: WriteQueue
  log: FastifyBaseLogger
  limit?: number
}

export class RequestLog {
  readonly #writes: WriteQueue
  readonly #log: FastifyBaseLogger
  readonly #limit: number
  #window = new EntryWindowBuffer()
  /** The other window, while the flush under way is not making batches of it. */
  #spare: EntryWindowBuffer | undefined = new EntryWindowBuffer()
  /** Batches made from the window and not yet written, oldest first (a failed write leaves them here). */
  #unwritten: RequestLogBatch[] = []
  #unwrittenEntries = 0
  #dropped = 0
  #failing = false
  #reportedAt = Number.NEGATIVE_INFINITY
  #droppedReported = 0
  readonly #flushes = new SerialFlush(() => this.#write())
  #timer: NodeJS.Timeout | undefined

  constructor(options: RequestLogOptions) {
    this.#writes = options.writes
    this.#log = options.log
    this.#limit = options.limit ?? REQUEST_LOG_LIMIT
  }

  /** Entries dropped because `limit` were already waiting. */
  get dropped(): number {
    return this.#dropped
  }

  /** Entries held, not yet written. */
  get waiting(): number {
    return this.#window.size + this.#unwrittenEntries
  }

  /** One answered request of `key`; its time is the one its request id carries (domain/request-id.ts). */
  record(
    key: KeyRecord,
    method: string,
    route: string,
    status: number,
    problem: string | undefined,
    latencyMs: number,
    requestId: string,
    address: string,
  ): void {
    const window = this.#window
    if (window.size + this.#unwrittenEntries >= this.#limit) {
      this.#dropped++
      return
    }
    window.add(key, method, route, status, problem, latencyMs, requestId, address)
    if (window.size === FLUSH_AT && this.#timer !== undefined) setImmediate(() => this.#tick())
  }

  /**
   * Writes everything recorded before the call; rejects if a chunk could not be written (it and
   * the chunks after it wait for the next flush). A call while a flush runs waits for it and then
   * writes what came meanwhile (the final flush on close misses nothing).
   */
  flush(): Promise<void> {
    return this.#flushes.run()
  }

  /** Flushes every `intervalMs` (and when the window fills), reporting failures and drops in the log. */
  start(intervalMs = REQUEST_LOG_FLUSH_MS): void {
    this.#timer = setInterval(() => this.#tick(), intervalMs)
    this.#timer.unref()
  }

  /** Stops the timer and writes what is held (a failure is reported, not thrown). */
  async stop(): Promise<void> {
    clearInterval(this.#timer)
    this.#timer = undefined
    await this.#tick()
  }

  #tick(): Promise<void> {
    return this.flush().then(
      () => this.#written(),
      (err: unknown) => this.#failed(err),
    )
  }

  async #write(): Promise<void> {
    // Requests go on into the other window while this one is made into batches, a step a turn.
    const taken = this.#window
    if (taken.size > 0 && this.#spare !== undefined) {
      this.#window = this.#spare
      this.#spare = undefined
      this.#unwrittenEntries += taken.size
      let made = 0
      try {
        for (const batches of encodeSteps(taken)) {
          this.#unwritten.push(...batches)
          for (const batch of batches) made += batch.entries
          await turn()
        }
      } finally {
        // Entries not made into batches (a bug in the making) are lost, not counted as waiting.
        this.#unwrittenEntries -= taken.size - made
        taken.clear()
        this.#spare = taken
      }
    }
    while (this.#unwritten.length > 0) {
      let end = 1
      let entries = this.#unwritten[0]!.entries
      while (
        end < this.#unwritten.length &&
        end < REQUEST_LOG_ROWS_PER_STATEMENT &&
        entries + this.#unwritten[end]!.entries <= REQUEST_LOG_CHUNK
      )
        entries += this.#unwritten[end++]!.entries
      const chunk = this.#unwritten.slice(0, end)
      await this.#writes.statement((db) => appendRequestLog(db, chunk))
      this.#unwritten = this.#unwritten.slice(end)
      this.#unwrittenEntries -= entries
    }
  }

  #failed(err: unknown): void {
    const now = Date.now()
    this.#failing = true
    if (now - this.#reportedAt < REPORT_EVERY_MS) return
    this.#reportedAt = now
    this.#log.warn(
      { err, waiting: this.waiting, dropped: this.#dropped - this.#droppedReported },
      'could not write the request log; its entries wait in memory, and past the limit new ones are dropped',
    )
    this.#droppedReported = this.#dropped
  }

  #written(): void {
    if (!this.#failing) return
    this.#failing = false
    this.#reportedAt = Number.NEGATIVE_INFINITY
    this.#log.warn(
      { dropped: this.#dropped - this.#droppedReported },
      'the request log is written again; entries dropped meanwhile are lost',
    )
    this.#droppedReported = this.#dropped
  }
}
