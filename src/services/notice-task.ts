/**
 * Sends the time-based notices that are due (cases/due-notices.ts): every instance runs it at start
 * and every hour, and each notice is sent once however many run it at the same moment.
 */
import type { FastifyBaseLogger } from 'fastify'
import { sendDueNotices } from '../cases/due-notices.js'
import type { NoticeContext } from '../cases/notices.js'
import type { Clock } from '../clock.js'
import type { Storage } from '../storage/connection.js'
import { PeriodicTask } from './periodic-task.js'

export const NOTICE_INTERVAL_MS = 3_600_000

export interface NoticeTaskOptions {
  storage: Storage
  clock: Clock
  log: FastifyBaseLogger
  notices: NoticeContext
}

/** `run()` resolves to how many messages it queued. */
export class NoticeTask extends PeriodicTask {
  constructor({ storage, clock, log, notices }: NoticeTaskOptions) {
    super(() => sendDueNotices(storage.db, clock.now(), notices), log, 'could not send the notices that are due')
  }
}
