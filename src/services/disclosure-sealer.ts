/**
 * Builds the disclosure log's lookups in the background (see storage/disclosure-log.ts): every
 * `intervalMs`, seals the segments that are complete. Queries never wait for it; until a
 * segment is sealed they scan it by id, so the only cost of falling behind is a longer scan.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../clock.js'
import type { Storage } from '../storage/connection.js'
import { sealSegments } from '../storage/disclosure-log.js'

export interface SealerOptions {
  storage: Storage
  clock: Clock
  segmentRows: number
  /** PostgreSQL only; see `SealOptions.horizonMs`. */
  horizonMs: number
  log: FastifyBaseLogger
}

export class DisclosureSealer {
  readonly #options: SealerOptions
  #running: Promise<number> | undefined
  #timer: NodeJS.Timeout | undefined

  constructor(options: SealerOptions) {
    this.#options = options
  }

  /** Seals every complete segment; calls made while a run is under way share it. Resolves to how many were sealed. */
  run(): Promise<number> {
    this.#running ??= this.#seal().finally(() => {
      this.#running = undefined
    })
    return this.#running
  }

  /** Runs every `intervalMs` (0: never; tests call `run`). */
  start(intervalMs: number): void {
    if (intervalMs === 0) return
    this.#timer = setInterval(() => {
      this.run().catch((err: unknown) => this.#options.log.warn({ err }, 'could not seal disclosure segments'))
    }, intervalMs)
    this.#timer.unref()
  }

  /** Stops the timer and waits for a run under way. */
  async stop(): Promise<void> {
    clearInterval(this.#timer)
    await this.#running?.catch(() => {})
  }

  #seal(): Promise<number> {
    const { storage, clock, segmentRows, horizonMs } = this.#options
    return sealSegments(storage.db, {
      segmentRows,
      horizonMs: storage.engine === 'postgres' ? horizonMs : 0,
      now: clock.now(),
      write: (work) => storage.writes.transaction(work),
    })
  }
}
