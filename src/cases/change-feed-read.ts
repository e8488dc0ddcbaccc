/**
 * Reading the change feed (storage/student-change-log.ts): a page and one disclosure row per
 * student with a change in it (`progress.changes`), one transaction committed before the caller
 * gets the data.
 */
import { changeLogFloor } from '../storage/change-feed-retention-repository.js'
import { recordDisclosures } from '../storage/disclosure-log.js'
import { pageStudentChanges, type StudentChangePage } from '../storage/student-change-log.js'
import type { StudentAccess } from '../storage/student-repository.js'
import type { WriteQueue } from '../storage/write-queue.js'

/**
 * One page of the change feed after `after` (see `pageStudentChanges`; `now`: no changes, and
 * the last change committed as `next`; `beginning`: from the oldest change still kept), `ahead`
 * when `after` is past the last change, `expired` when changes after it were pruned (see
 * storage/change-feed-retention-repository.ts): nothing is disclosed then, and the reader must resync.
 */
export async function readChangeFeed(
  writes: WriteQueue,
  access: StudentAccess,
  after: number | 'now' | 'beginning',
  limit: number,
): Promise<StudentChangePage | 'ahead' | 'expired'> {
  return writes.transaction(async (trx) => {
    for (;;) {
      const start = after === 'beginning' ? await changeLogFloor(trx) : after
      const page = await pageStudentChanges(trx, access, start, limit)
      if (page === undefined) return 'ahead'
      // Read after the rows: a prune that deleted any of them before they were read shows here.
      if (start !== 'now' && start < (await changeLogFloor(trx))) {
        // From the beginning means from what is kept: start again from the new floor.
        if (after === 'beginning') continue
        return 'expired'
      }
      await recordDisclosures(
        trx,
        access,
        [...new Set(page.changes.map((change) => change.studentId))],
        'progress.changes',
        'disclosed',
      )
      return page
    }
  })
}
