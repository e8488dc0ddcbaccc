/**
 * Keeps the change feed, the mail outbox, the request log (7 days), and the disclosure log when it
 * has a retention period, within their periods (and deletes ended sessions and dead account links): once at start and
 * every hour, deletes what is older in small writes (see
 * storage/change-feed-retention-repository.ts and storage/disclosure-retention-repository.ts), pausing between two so
 * that the requests held up by one are answered before the next. Every instance runs it; each
 * step is safe to run twice or at once on two instances.
 */
import { setTimeout as delay } from 'node:timers/promises'
import type { FastifyBaseLogger } from 'fastify'
import { pruneAccountTokens } from '../cases/account-links.js'
import { pruneMailOutbox } from '../cases/mail.js'
import type { Clock } from '../clock.js'
import { pruneChangeLog } from '../storage/change-feed-retention-repository.js'
import type { Storage } from '../storage/connection.js'
import { pruneDisclosureLog } from '../storage/disclosure-retention-repository.js'
import { pruneRequestLog, REQUEST_LOG_DAYS } from '../storage/request-log-repository.js'
import { PeriodicTask } from './periodic-task.js'

export const PRUNE_INTERVAL_MS = 3_600_000
const PRUNE_PAUSE_MS = 10
const DAY_MS = 86_400_000

export interface PrunerOptions {
  storage: Storage
  clock: Clock
  /** Days the change feed keeps a change. */
  feedRetentionDays: number
  /** Days the disclosure log keeps a row; 0 keeps every row. */
  disclosureRetentionDays: number
  /** Days the mail outbox keeps a message once it is over (cases/mail.ts). */
  mailRetentionDays: number
  log: FastifyBaseLogger
  /** Change log rows per delete; the storage module's default unless given. */
  batch?: number
  /** Between two deletes; PRUNE_PAUSE_MS by default. */
  pauseMs?: number
}

/** `run()` resolves to how many change log rows, messages, request-log batches and disclosure segments were deleted. */
export class RetentionPruner extends PeriodicTask {
  constructor(options: PrunerOptions) {
    const { storage, clock, feedRetentionDays, disclosureRetentionDays, mailRetentionDays, log, batch } = options
    const pauseMs = options.pauseMs ?? PRUNE_PAUSE_MS
    const write = <T>(work: (trx: Storage['db']) => Promise<T>) => storage.writes.transaction(work)
    const prune = async (stopping: AbortSignal) => {
      const pause = async () => {
        if (!stopping.aborted) await delay(pauseMs)
        return !stopping.aborted
      }
      const cutoff = (days: number) => new Date(clock.now() - days * DAY_MS).toISOString()
      let deleted = await pruneChangeLog(storage.db, {
        before: cutoff(feedRetentionDays),
        write,
        ...(batch === undefined ? {} : { batch }),
        pause,
      })
      if (!stopping.aborted) deleted += await write((trx) => pruneMailOutbox(trx, clock.now(), mailRetentionDays))
      if (!stopping.aborted) await write((trx) => pruneAccountTokens(trx, clock.now()))
      if (!stopping.aborted)
        deleted += await pruneRequestLog(storage.db, { before: clock.now() - REQUEST_LOG_DAYS * DAY_MS, write, pause })
      if (disclosureRetentionDays > 0 && !stopping.aborted)
        deleted += await pruneDisclosureLog(storage.db, { before: cutoff(disclosureRetentionDays), write, pause })
      return deleted
    }
    super(prune, log, 'could not prune the change feed, the mail outbox, the request log or the disclosure log')
  }
}
