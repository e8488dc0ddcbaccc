/**
 * Background work that runs every so often on each instance (sealing the disclosure log): calls
 * made while a run is under way share it, a timer drives it
 * in the server, and tests call `run` themselves instead (no timer races a test's steps).
 */
import type { FastifyBaseLogger } from 'fastify'

export class PeriodicTask {
  readonly #work: (stopping: AbortSignal) => Promise<number>
  readonly #log: FastifyBaseLogger
  readonly #failure: string
  #running: Promise<number> | undefined
  #timer: NodeJS.Timeout | undefined
  readonly #stopping = new AbortController()

  /**
   * `work` resolves to how much it did, and may end early once `stopping` is aborted (work that
   * comes in steps); `failure` is the warning logged when a timed run fails.
   */
  constructor(work: (stopping: AbortSignal) => Promise<number>, log: FastifyBaseLogger, failure: string) {
    this.#work = work
    this.#log = log
    this.#failure = failure
  }

  run(): Promise<number> {
    this.#running ??= this.#work(this.#stopping.signal).finally(() => {
      this.#running = undefined
    })
    return this.#running
  }

  /** Runs every `intervalMs` (0: never). */
  start(intervalMs: number): void {
    if (intervalMs === 0) return
    this.#timer = setInterval(() => {
      this.run().catch((err: unknown) => this.#log.warn({ err }, this.#failure))
    }, intervalMs)
    this.#timer.unref()
  }

  /** Stops the timer, tells a run under way to stop, and waits for it. */
  async stop(): Promise<void> {
    clearInterval(this.#timer)
    this.#stopping.abort()
    await this.#running?.catch(() => {})
  }
}
