/**
 * A flush of what a service holds in memory, one at a time: a call while one runs waits for it and
 * then flushes again, since the running one may have passed what was recorded after it began (the
 * final flush on close must miss nothing). Shared by key-usage.ts and request-log.ts.
 */
export class SerialFlush {
  readonly #write: () => Promise<void>
  #running: Promise<void> | undefined
  #queued: Promise<void> | undefined

  constructor(write: () => Promise<void>) {
    this.#write = write
  }

  /** Resolves once everything recorded before the call is written; rejects as the write did. */
  run(): Promise<void> {
    if (this.#running === undefined) {
      this.#running = this.#write().finally(() => (this.#running = undefined))
      return this.#running
    }
    this.#queued ??= this.#running
      .catch(() => {})
      .then(() => {
        this.#queued = undefined
        return this.run()
      })
    return this.#queued
  }
}
