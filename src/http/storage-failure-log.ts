/**
 * One log line per storage failure, not a stack trace per request. When the disk fills up every
 * write fails the same way; 40 requests logging 40 stacks bury the one fact the operator needs
 * (which error, since when). So the first failure of each kind is logged at once, as a single
 * line naming the error code, and repeats of that kind within the interval are only counted,
 * then reported with the next line of that kind.
 */
import type { FastifyBaseLogger } from 'fastify'

/** Repeats of one kind of failure within this window are counted, not logged. */
const REPEAT_WINDOW_MS = 10_000

interface Seen {
  loggedAt: number
  repeats: number
}

export class StorageFailureLog {
  readonly #windowMs: number
  readonly #now: () => number
  readonly #seen = new Map<string, Seen>()

  constructor(options: { windowMs?: number; now?: () => number } = {}) {
    this.#windowMs = options.windowMs ?? REPEAT_WINDOW_MS
    this.#now = options.now ?? Date.now
  }

  /**
   * Logs `error` (one line, no stack) unless one of the same kind was logged within the window.
   *
   * @example
   * failures.report(request.log, error) // "storage unavailable: SQLITE_FULL: database or disk is full"
   */
  report(log: FastifyBaseLogger, error: unknown): void {
    const { code, message } = describe(error)
    const now = this.#now()
    const seen = this.#seen.get(code)
    if (seen !== undefined && now - seen.loggedAt < this.#windowMs) {
      seen.repeats++
      return
    }
    const repeats = seen?.repeats ?? 0
    this.#seen.set(code, { loggedAt: now, repeats: 0 })
    const since = repeats > 0 ? ` (${repeats} more since the last report)` : ''
    log.warn(
      { storageError: code, repeats },
      `storage unavailable: ${code}: ${message}; answering 503 with Retry-After${since}`,
    )
  }
}

function describe(error: unknown): { code: string; message: string } {
  if (!(error instanceof Error)) return { code: 'unknown', message: String(error) }
  const code = (error as { code?: unknown }).code
  // The first line only: some drivers put a whole query or a stack into the message.
  const message = error.message.split('\n')[0]!.slice(0, 300)
  return { code: typeof code === 'string' && code !== '' ? code : error.name, message }
}
