/**
 * Ends the links of organisations whose agreement's disposition period has run out
 * (cases/agreement-disposition.ts): every instance runs it at start and every hour, and each
 * disposition is carried out once however many run it at the same moment. Logs what it did, by
 * ids only.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../clock.js'
import { disposeDueAgreements } from '../cases/agreement-disposition.js'
import type { Storage } from '../storage/connection.js'
import { PeriodicTask } from './periodic-task.js'

export const DISPOSITION_INTERVAL_MS = 3_600_000

export interface DispositionTaskOptions {
  storage: Storage
  clock: Clock
  log: FastifyBaseLogger
}

/** `run()` resolves to how many dispositions it carried out. */
export class DispositionTask extends PeriodicTask {
  constructor({ storage, clock, log }: DispositionTaskOptions) {
    const dispose = async () => {
      const outcomes = await disposeDueAgreements(storage.db, clock.now())
      for (const outcome of outcomes) log.info({ disposition: outcome }, 'agreement ended: links ended for deletion')
      return outcomes.length
    }
    super(dispose, log, 'could not end the links of ended agreements')
  }
}
