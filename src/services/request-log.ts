/**
 * The request log (docs/request-log.md): one entry per API request answered to an organisation's
 * key, kept in memory on the request path and written by `flush` off it, chunk by chunk, each one
 * unit of the write queue: on SQLite a chunk joins the requests' own group commit, so a request
 * waits behind at most one chunk, never behind the whole flush.
 *
 * What storage cannot take waits, up to `limit` entries in all; past that, new entries are
 * dropped and counted (`dropped`), and a warning says so at most once a minute, then once more
 * when the log is written again.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { KeyRecord } from '../domain/api-key.js'
import { appendRequestLog, type RequestLogEntry } from '../storage/request-log-repository.js'
import type { WriteQueue } from '../storage/write-queue.js'

/** How often each instance writes what it holds. */
export const REQUEST_LOG_FLUSH_MS = 1000
/** Entries per statement. */
export const REQUEST_LOG_CHUNK = 64
/** Entries held at most, written or waiting (at 20,000 requests a second, 5 s of them). */
export const REQUEST_LOG_LIMIT = 100_000
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
  #buffer: RequestLogEntry[] = []
  /** Chunks taken from the buffer and not yet written, oldest first (a failed write leaves them here). */
  readonly #unwritten: RequestLogEntry[][] = []
  #unwrittenEntries = 0
  #dropped = 0
  #failing = false
  #reportedAt = Number.NEGATIVE_INFINITY
  #droppedReported = 0
  #running: Promise<void> | undefined
  #queued: Promise<void> | undefined
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
    return this.#buffer.length + this.#unwrittenEntries
  }

  /** One answered request of `key`, which arrived at `at`. */
  record(
    key: KeyRecord,
    at: number,
    method: string,
    route: string,
    status: number,
    problem: string | undefined,
    latencyMs: number,
    requestId: string,
    address: string,
  ): void {
    if (this.#buffer.length + this.#unwrittenEntries >= this.#limit) {
      this.#dropped++
      return
    }
    this.#buffer.push({
      at,
      organisationId: key.organisation.id,
      keyId: key.keyId,
      method,
      route,
      status,
      problem: problem ?? null,
      latencyMs: Math.round(latencyMs * 10) / 10,
      requestId,
      address,
    })
  }

  /**
   * Writes everything recorded before the call; rejects if a chunk could not be written (it and
   * the chunks after it wait for the next flush). A call while a flush runs waits for it and then
   * writes what came meanwhile (the final flush on close misses nothing).
   */
  flush(): Promise<void> {
    if (this.#running === undefined) {
      this.#running = this.#write().finally(() => (this.#running = undefined))
      return this.#running
    }
    this.#queued ??= this.#running
      .catch(() => {})
      .then(() => {
        this.#queued = undefined
        return this.flush()
      })
    return this.#queued
  }

  /** Flushes every `intervalMs`, reporting failures and drops in the log. */
  start(intervalMs = REQUEST_LOG_FLUSH_MS): void {
    this.#timer = setInterval(() => {
      this.flush().then(
        () => this.#written(),
        (err: unknown) => this.#failed(err),
      )
    }, intervalMs)
    this.#timer.unref()
  }

  /** Stops the timer and writes what is held (a failure is reported, not thrown). */
  async stop(): Promise<void> {
    clearInterval(this.#timer)
    await this.flush().then(
      () => this.#written(),
      (err: unknown) => this.#failed(err),
    )
  }

  async #write(): Promise<void> {
    const taken = this.#buffer
    this.#buffer = []
    for (let start = 0; start < taken.length; start += REQUEST_LOG_CHUNK)
      this.#unwritten.push(taken.slice(start, start + REQUEST_LOG_CHUNK))
    this.#unwrittenEntries += taken.length
    while (this.#unwritten.length > 0) {
      const chunk = this.#unwritten[0]!
      await this.#writes.statement((db) => appendRequestLog(db, chunk))
      this.#unwritten.shift()
      this.#unwrittenEntries -= chunk.length
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
