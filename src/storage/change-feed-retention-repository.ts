/**
 * Retention of the student change log: rows older than the retention period are deleted from
 * the oldest number up, and the `student_changes_floor` row of `meta` records the highest number
 * deleted, in the same transaction, so that a reader can tell a cursor below it (whose next
 * changes are gone) from one that simply has nothing new: never a silent gap.
 *
 * Only a prefix of the log is ever deleted: `changed_at` comes from each writer's clock and need
 * not grow with the number, so pruning stops at the first row still within the period, and
 * every number at or below the floor is gone while every one above it is kept.
 */
import type { Kysely } from 'kysely'
import type { Database } from './tables.js'

const FLOOR = 'student_changes_floor'
const COUNTER = 'student_changes'

/**
 * How far past the restored log's last number the numbering restarts when the numbers partners
 * may hold are unknown (the replaced database was unreadable, or there was none): beyond what any
 * deployment writes between a backup and its restore, and far within exact integers.
 */
const UNKNOWN_CURSORS_MARGIN = 1_000_000_000

/** Rows one transaction deletes at most: on SQLite it holds the only write lock meanwhile. */
export const PRUNE_BATCH = 500

/** The highest number pruned from the log (0 when nothing was): cursors below it have lost changes. */
export async function changeLogFloor(db: Kysely<Database>): Promise<number> {
  const row = await db.selectFrom('meta').select('version').where('name', '=', FLOOR).executeTakeFirst()
  return row === undefined ? 0 : Number(row.version)
}

export interface PruneOptions {
  /** ISO 8601 UTC: rows changed before it go. */
  before: string
  /** Runs one transaction (the write queue's on the server). */
  write: <T>(work: (trx: Kysely<Database>) => Promise<T>) => Promise<T>
  batch?: number
  /** Called between two batches; false stops the run. */
  pause?: () => Promise<boolean>
}

/**
 * Deletes the log's rows changed before `before`, oldest number first, `batch` at a time, each
 * batch with its floor in one transaction; resolves to how many rows were deleted. Safe on every
 * instance at once: each batch locks the floor row first, so two runs take turns and the second
 * finds the first's work done.
 */
export async function pruneChangeLog(db: Kysely<Database>, options: PruneOptions): Promise<number> {
  const { before, write, batch = PRUNE_BATCH, pause = async () => true } = options
  // Most runs find nothing to do: they write nothing either (no lock taken, no floor row made).
  const oldest = await db.selectFrom('student_changes').select('changed_at').orderBy('seq').limit(1).executeTakeFirst()
  if (oldest === undefined || oldest.changed_at >= before) return 0
  let deleted = 0
  for (;;) {
    const pruned = await write(async (trx) => {
      await trx
        .insertInto('meta')
        .values({ name: FLOOR, version: 0 })
        .onConflict((oc) => oc.doNothing())
        .execute()
      // A no-op update: on PostgreSQL it holds the floor row until the commit, serialising pruners.
      const [locked] = await trx
        .updateTable('meta')
        .set((eb) => ({ version: eb.ref('version') }))
        .where('name', '=', FLOOR)
        .returning('version')
        .execute()
      const floor = Number(locked!.version)
      const rows = await trx
        .selectFrom('student_changes')
        .select(['seq', 'changed_at'])
        .where('seq', '>', floor)
        .orderBy('seq')
        .limit(batch)
        .execute()
      const newer = rows.findIndex((row) => row.changed_at >= before)
      const old = newer === -1 ? rows : rows.slice(0, newer)
      if (old.length === 0) return { count: 0, more: false }
      const top = Number(old.at(-1)!.seq)
      await trx.deleteFrom('student_changes').where('seq', '>', floor).where('seq', '<=', top).execute()
      await trx.updateTable('meta').set({ version: top }).where('name', '=', FLOOR).execute()
      return { count: old.length, more: newer === -1 && rows.length === batch }
    })
    deleted += pruned.count
    if (!pruned.more || !(await pause())) return deleted
  }
}

/**
 * After a restore from a backup, in the restored database: the log's numbering moves past every
 * number partners may hold (`handedOut`, the replaced database's last number, or a wide margin when
 * unknown) and the floor with it, and the rows below go. Every cursor from before the restore then
 * answers 410 `cursor_expired` and its holder resyncs, since its copy may hold changes the restore
 * undid; none can silently skip the changes numbered after the restore. Resolves to the new floor.
 */
export async function restartChangeLog(db: Kysely<Database>, handedOut: number | undefined): Promise<number> {
  const row = await db.selectFrom('meta').select('version').where('name', '=', COUNTER).executeTakeFirst()
  const last = Number(row?.version ?? 0)
  const floor = handedOut === undefined ? last + UNKNOWN_CURSORS_MARGIN : Math.max(last, handedOut) + 1
  await db
    .insertInto('meta')
    .values({ name: COUNTER, version: floor })
    .onConflict((oc) => oc.column('name').doUpdateSet({ version: floor }))
    .execute()
  await db
    .insertInto('meta')
    .values({ name: FLOOR, version: floor })
    .onConflict((oc) => oc.column('name').doUpdateSet({ version: floor }))
    .execute()
  await db.deleteFrom('student_changes').where('seq', '<=', floor).execute()
  return floor
}
