/**
 * Retention of the disclosure log (when the operator sets one): whole sealed segments whose
 * newest row is older than the period go, oldest first, never the newest sealed segment (it marks
 * where the unsealed tail starts, see disclosure-log.ts).
 *
 * A segment goes in steps, each a short write: its row in `disclosure_segments` first, which hides
 * it from every query (they reach rows only through the segments, or past the newest one), then
 * its lookups one dimension at a time, then its rows. What lies below the oldest segment left is
 * therefore always the remains of one being deleted, and a run stopped between two steps (or an
 * instance pruning at the same time) leaves them for the next run to finish: every step is a
 * delete of what lies below a bound, so running one twice does nothing more.
 */
import type { Kysely } from 'kysely'
import type { Database } from './tables.js'

type Db = Kysely<Database>

const DIMENSIONS = ['s', 'o', 'k'] as const

export interface DisclosurePruneOptions {
  /** ISO 8601 UTC: segments whose rows are all older go. */
  before: string
  write: <T>(work: (trx: Db) => Promise<T>) => Promise<T>
  /** Awaited before each write; false ends the run there. */
  pause?: () => Promise<boolean>
}

/** Deletes the segments of the log older than `before`; resolves to how many segments went. */
export async function pruneDisclosureLog(db: Db, options: DisclosurePruneOptions): Promise<number> {
  const { before, write, pause = async () => true } = options
  let pruned = 0
  for (;;) {
    const segments = await db
      .selectFrom('disclosure_segments')
      .select(['first_id', 'last_at'])
      .orderBy('first_id')
      .limit(2)
      .execute()
    const oldest = segments[0]
    if (oldest === undefined) return pruned
    const bound = Number(oldest.first_id)
    if (!(await clearBelow(db, bound, write, pause))) return pruned
    // One segment alone is the newest: it stays.
    if (segments.length < 2 || oldest.last_at === null || oldest.last_at >= before) return pruned
    if (!(await pause())) return pruned
    await write((trx) => trx.deleteFrom('disclosure_segments').where('first_id', '=', bound).execute())
    pruned++
  }
}

/** Deletes the lookups and rows below `bound` (a segment's first id); false when a pause said stop. */
async function clearBelow(
  db: Db,
  bound: number,
  write: DisclosurePruneOptions['write'],
  pause: () => Promise<boolean>,
) {
  for (const dimension of DIMENSIONS) {
    const left = await db
      .selectFrom('disclosure_lookup')
      .select('id')
      .where('segment', '<', bound)
      .where('dimension', '=', dimension)
      .limit(1)
      .executeTakeFirst()
    if (left === undefined) continue
    if (!(await pause())) return false
    await write((trx) =>
      trx.deleteFrom('disclosure_lookup').where('segment', '<', bound).where('dimension', '=', dimension).execute(),
    )
  }
  const row = await db.selectFrom('disclosures').select('id').where('id', '<', bound).limit(1).executeTakeFirst()
  if (row === undefined) return true
  if (!(await pause())) return false
  await write((trx) => trx.deleteFrom('disclosures').where('id', '<', bound).execute())
  return true
}
