/**
 * Keeps the change feed within its retention period: once at start and every hour, deletes the
 * change log's rows older than the period in small batches (see storage/change-feed-retention.ts),
 * pausing between batches so that the requests held up by one delete are answered before the next.
 * Every instance runs it; the batches lock the floor row, so concurrent runs take turns.
 */
import { setTimeout as delay } from 'node:timers/promises'
import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../clock.js'
import { pruneChangeLog } from '../storage/change-feed-retention.js'
import type { Storage } from '../storage/connection.js'
import { PeriodicTask } from './periodic-task.js'

export const PRUNE_INTERVAL_MS = 3_600_000
const PRUNE_PAUSE_MS = 10
const DAY_MS = 86_400_000

export interface PrunerOptions {
  storage: Storage
  clock: Clock
  retentionDays: number
  log: FastifyBaseLogger
  /** Rows per delete; the storage module's default unless given. */
  batch?: number
  /** Between two deletes; PRUNE_PAUSE_MS by default. */
  pauseMs?: number
}

/** `run()` resolves to how many changes were deleted. */
export class ChangeFeedPruner extends PeriodicTask {
  constructor({ storage, clock, retentionDays, log, batch, pauseMs = PRUNE_PAUSE_MS }: PrunerOptions) {
    const prune = (stopping: AbortSignal) =>
      pruneChangeLog({
        before: new Date(clock.now() - retentionDays * DAY_MS).toISOString(),
        write: (work) => storage.writes.transaction(work),
        ...(batch === undefined ? {} : { batch }),
        pause: async () => {
          if (!stopping.aborted) await delay(pauseMs)
          return !stopping.aborted
        },
      })
    super(prune, log, 'could not prune the change feed')
  }
}
