/**
 * Brings a OneRoster export (oneroster.ts) into the service: first a preview of what it would
 * change and every problem, with nothing written (`planRosterImport`); then, when there is no
 * problem, the change itself in one transaction, all or nothing (`applyRosterImport`).
 *
 * Schools are matched by their sourcedId (`schools.external_id`) and students by theirs
 * (`students.external_id`). A new student gets a new id, its first name and the import's tier;
 * a known one keeps its tier, and its first name follows the file. Attendance changes only
 * through school-shares.ts, so that the links school shares imply follow it. A bulk users file
 * lists every student: one it lacks leaves all its schools and is otherwise kept (erasing it is
 * `curriculum students erase --file`). A delta's tobedeleted students are erased as
 * student-removal.ts erases, and only when the caller confirms it.
 *
 * Nothing but ids, first names and school names reaches the database, and problems never quote a
 * first name: the reader drops every other field (oneroster.ts).
 */
import type { Kysely } from 'kysely'
import type { TierId } from '../domain/tiers.js'
import type { Database } from '../storage/tables.js'
import { inTransaction } from '../storage/transaction.js'
import type { OneRosterExport, RosterProblem } from './oneroster.js'
import { RosterImportRefused } from './roster-import-errors.js'
import { type RosterCounts, type RosterImportOptions, RosterRun } from './roster-run.js'

export { ErasureNotConfirmed, RosterImportRefused } from './roster-import-errors.js'
export { KEPT_FIELDS, NEVER_KEPT } from './roster-kept.js'
export type { RosterCounts, RosterImportOptions } from './roster-run.js'

export interface RosterPreview extends RosterCounts {
  version: OneRosterExport['version']
  kind: 'bulk' | 'delta'
  mode: OneRosterExport['mode']
  tier: TierId
  skipped: OneRosterExport['skipped']
  problems: RosterProblem[]
  moreProblems: number
}

export interface RosterOutcome extends RosterCounts {
  /** Links to partner organisations made and ended through school shares. */
  links: { made: number; ended: number }
  /** Webhook deliveries queued. */
  webhooks: number
  /** Ids of the students erased. */
  erased: string[]
}

/** What importing `roster` would change, and every problem; writes nothing. */
export async function planRosterImport(
  db: Kysely<Database>,
  roster: OneRosterExport,
  options: RosterImportOptions,
): Promise<RosterPreview> {
  const run = new RosterRun(db, roster, options, false)
  await run.walk()
  return {
    version: roster.version,
    kind: roster.mode.users === 'bulk' ? 'bulk' : 'delta',
    mode: roster.mode,
    tier: run.tier,
    skipped: roster.skipped,
    ...run.counts,
    problems: run.problems.list,
    moreProblems: run.problems.more,
  }
}

/**
 * Imports `roster` in one transaction: every change or none. Throws RosterImportRefused when it
 * has a problem and ErasureNotConfirmed when it would erase without `confirmErase`.
 * `beforeCommit` runs in the transaction with the outcome: the audit row goes there.
 *
 * The comparison with what is stored runs first, outside the transaction, and the transaction
 * then reads again and writes only the students it found to change: an unchanged student costs
 * no time while the transaction is open, which on SQLite holds up every other writer. A student
 * that starts to differ between the two (another import's) is left to the next import.
 *
 * @example
 * const outcome = await applyRosterImport(db, roster, { now: Date.now() }, (trx, o) => audit(trx, o))
 */
export async function applyRosterImport(
  db: Kysely<Database>,
  roster: OneRosterExport,
  options: RosterImportOptions,
  beforeCommit?: (trx: Kysely<Database>, outcome: RosterOutcome) => Promise<void>,
): Promise<RosterOutcome> {
  const { progress: _progress, ...quiet } = options
  const preview = new RosterRun(db, roster, quiet, false)
  await preview.walk()
  if (preview.problems.count > 0) throw new RosterImportRefused(preview.problems.list, preview.problems.more)
  return inTransaction(db, async (trx) => {
    const run = new RosterRun(trx, roster, options, true, preview.touched)
    await run.walk()
    const students = run.counts.students
    const outcome: RosterOutcome = {
      ...run.counts,
      students: {
        ...students,
        unchanged: preview.counts.students.unchanged + students.unchanged,
        noLongerPresent: preview.counts.students.noLongerPresent,
      },
      links: { made: run.linksMade, ended: run.linksEnded },
      webhooks: run.webhooks,
      erased: run.erased,
    }
    await beforeCommit?.(trx, outcome)
    await run.numberNotices()
    return outcome
  })
}
