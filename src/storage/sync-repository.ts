/**
 * The roster a partner reads to keep a copy of its students in sync: the students linked to its
 * organisation, by id. The read with its disclosure rows is a case (cases/roster-read.ts), as is
 * the change feed's (cases/change-feed-read.ts).
 */
import { type Kysely, sql } from 'kysely'
import type { TierId } from '../domain/tiers.js'
import type { StudentAccess } from './student-repository.js'
import type { Database } from './tables.js'

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

/** One more row than `query.limit` when another page follows. */
export function rosterRows(db: Kysely<Database>, access: StudentAccess, query: RosterQuery) {
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
