/**
 * Work a form does after its page has been answered: so that "Forgot your password?" and
 * sign-up answer in the same time whether or not the address has an account, what only an
 * existing account costs (a link, a message) happens once the answer is on its way. A failure
 * is logged, and the person asks again; the dashboard waits for pending work when it closes.
 */
import type { FastifyBaseLogger } from 'fastify'

export interface AfterAnswer {
  /** Starts `work` on the next turn of the event loop. */
  run(what: string, work: () => Promise<unknown>): void
  /** Resolves when no work is pending. */
  idle(): Promise<void>
}

export function createAfterAnswer(log: FastifyBaseLogger): AfterAnswer {
  const pending = new Set<Promise<void>>()
  return {
    run(what, work) {
      const done: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
        .then(work)
        .then(
          () => undefined,
          (err: unknown) => log.error({ err }, `${what} failed after the answer was sent`),
        )
        .finally(() => pending.delete(done))
      pending.add(done)
    },
    async idle() {
      while (pending.size > 0) await Promise.all(pending)
    },
  }
}
