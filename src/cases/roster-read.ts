/**
 * Reading the roster (the students linked to the key's organisation, by id): the page and one
 * disclosure row per student listed (`students.list`), one transaction committed before the
 * caller gets the data.
 */
import { recordDisclosures } from '../storage/disclosure-log.js'
import type { StudentAccess } from '../storage/student-repository.js'
import { type RosterPage, type RosterQuery, rosterRows } from '../storage/sync-repository.js'
import type { WriteQueue } from '../storage/write-queue.js'
import { keysetPage } from '../storage/keyset-page.js'

/** One page of the organisation's students, ordered by id. */
export async function readRoster(writes: WriteQueue, access: StudentAccess, query: RosterQuery): Promise<RosterPage> {
  return writes.transaction(async (trx) => {
    const { rows, next } = keysetPage(await rosterRows(trx, access, query), query.limit)
    await recordDisclosures(
      trx,
      access,
      rows.map((row) => row.id),
      'students.list',
      'disclosed',
    )
    return {
      students: rows.map((row) => ({
        id: row.id,
        firstName: row.first_name,
        tier: row.tier,
        updatedAt: row.updated_at,
      })),
      next,
    }
  })
}
