/**
 * What a partner reads to keep a copy of its students in sync: the roster (the students linked
 * to its organisation, by id) and the change feed (student-change-log.ts). Each read and the
 * disclosure rows of every student it returns are one transaction, committed before the caller
 * gets the data: one row per student listed (`students.list`), one per student with a change
 * in the page (`progress.changes`).
 */
import { type Kysely, sql } from 'kysely'
import type { TierId } from '../domain/tiers.js'
import { changeLogFloor } from './change-feed-retention.js'
import { recordDisclosures } from './disclosure-log.js'
import { pageStudentChanges, type StudentChangePage } from './student-change-log.js'
import type { StudentAccess } from './student-repository.js'
import type { Database } from './tables.js'
import type { WriteQueue } from './write-queue.js'

export interface RosterEntry {
  id: string
  firstName: string
  tier: TierId
  updatedAt: string
}

export interface RosterPage {
  students: RosterEntry[]
  /** The last id of this page when another page follows, else null. */
  next: string | null
}

export interface RosterQuery {
  limit: number
  /** Continue after this student id. */
  after?: string
  tier?: TierId
  /** Students whose first name or id starts with this, case-insensitively (the dashboard's search). */
  search?: string
}

function rosterRows(db: Kysely<Database>, access: StudentAccess, query: RosterQuery) {
  return (
    db
      .selectFrom('student_organisations as so')
      .innerJoin('students as s', 's.id', 'so.student_id')
      .select((eb) => [
        's.id',
        's.first_name',
        's.tier',
        eb.fn.coalesce('s.updated_at', 's.tier_updated_at').as('updated_at'),
      ])
      .where('so.organisation_id', '=', access.organisationId)
      .where('s.sandbox', '=', access.sandbox ? 1 : 0)
      .$if(query.tier !== undefined, (q) => q.where('s.tier', '=', query.tier!))
      .$if(query.search !== undefined, (q) => {
        // A prefix match, with LIKE's own wildcards in the search taken literally.
        const prefix = `${query.search!.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`
        return q.where((eb) =>
          eb.or([
            sql<boolean>`lower(${eb.ref('s.first_name')}) like ${prefix} escape '\\'`,
            sql<boolean>`lower(${eb.ref('s.id')}) like ${prefix} escape '\\'`,
          ]),
        )
      })
      // By id, and continuing strictly after the last id seen: a student added meanwhile sorts
      // either before the cursor (not listed in this pass) or after it (listed once), so no
      // student present throughout is skipped or listed twice.
      .$if(query.after !== undefined, (q) => q.where('so.student_id', '>', query.after!))
      .orderBy('so.student_id')
      .limit(query.limit + 1)
      .execute()
  )
}

/** One page of the organisation's students, ordered by id. */
export async function readRoster(writes: WriteQueue, access: StudentAccess, query: RosterQuery): Promise<RosterPage> {
  return writes.transaction(async (trx) => {
    const rows = await rosterRows(trx, access, query)
    const more = rows.length > query.limit
    if (more) rows.length = query.limit
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
      next: more ? rows.at(-1)!.id : null,
    }
  })
}

/**
 * One page of the change feed after `after` (see `pageStudentChanges`; `now`: no changes, and
 * the last change committed as `next`; `beginning`: from the oldest change still kept), `ahead`
 * when `after` is past the last change, `expired` when changes after it were pruned (see
 * change-feed-retention.ts): nothing is disclosed then, and the reader must resync.
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
