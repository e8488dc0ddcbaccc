/**
 * Builds the disclosure log's lookups in the background (see storage/disclosure-log.ts): every
 * second, seals the segments that are complete. Queries never wait for it; until a segment is
 * sealed they scan it by id, so the only cost of falling behind is a longer scan.
 *
 * Between two of its writes it waits `pauseMs`, so that the requests held up by one write are
 * answered before the next (on SQLite each write keeps the event loop for a few milliseconds). The
 * pause still leaves it far faster than the service writes at its peak (docs/performance.md); a
 * backlog (after a long stop, say) is worked off over several runs, and `stop` ends a run at its
 * next pause instead of waiting for it all.
 */
import { setTimeout as delay } from 'node:timers/promises'
import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../clock.js'
import type { Storage } from '../storage/connection.js'
import { sealSegments } from '../storage/disclosure-log.js'
import { PeriodicTask } from './periodic-task.js'

export const SEAL_PAUSE_MS = 10

export interface SealerOptions {
  storage: Storage
  clock: Clock
  segmentRows: number
  /** PostgreSQL only; see `SealOptions.horizonMs`. */
  horizonMs: number
  log: FastifyBaseLogger
  /** Between two writes; SEAL_PAUSE_MS by default. */
  pauseMs?: number
}

/** `run()` resolves to how many segments were sealed. */
export class DisclosureSealer extends PeriodicTask {
  constructor({ storage, clock, segmentRows, horizonMs, log, pauseMs = SEAL_PAUSE_MS }: SealerOptions) {
    // A run that is stopped ends at its next pause.
    const seal = (stopping: AbortSignal) =>
      sealSegments(storage.db, {
        segmentRows,
        horizonMs: storage.engine === 'postgres' ? horizonMs : 0,
        now: clock.now(),
        write: (work) => storage.writes.transaction(work),
        pause: async () => {
          if (!stopping.aborted) await delay(pauseMs)
          return !stopping.aborted
        },
      })
    super(seal, log, 'could not seal disclosure segments')
  }
}
