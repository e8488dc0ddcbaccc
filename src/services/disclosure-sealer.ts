/**
 * Builds the disclosure log's lookups in the background (see storage/disclosure-log.ts): every
 * second, seals the segments that are complete. Queries never wait for it; until a segment is
 * sealed they scan it by id, so the only cost of falling behind is a longer scan.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../clock.js'
import type { Storage } from '../storage/connection.js'
import { sealSegments } from '../storage/disclosure-log.js'
import { PeriodicTask } from './periodic-task.js'

export interface SealerOptions {
  storage: Storage
  clock: Clock
  segmentRows: number
  /** PostgreSQL only; see `SealOptions.horizonMs`. */
  horizonMs: number
  log: FastifyBaseLogger
}

/** `run()` resolves to how many segments were sealed. */
export class DisclosureSealer extends PeriodicTask {
  constructor({ storage, clock, segmentRows, horizonMs, log }: SealerOptions) {
    const seal = () =>
      sealSegments(storage.db, {
        segmentRows,
        horizonMs: storage.engine === 'postgres' ? horizonMs : 0,
        now: clock.now(),
        write: (work) => storage.writes.transaction(work),
      })
    super(seal, log, 'could not seal disclosure segments')
  }
}
