/**
 * Brings a OneRoster export (oneroster.ts) into the service: first a preview of what it would
 * change and every problem, with nothing written (`planRosterImport`); then, when there is no
 * problem, the change itself in one transaction, all or nothing (`applyRosterImport`).
 *
 * Schools are matched by their sourcedId (`schools.external_id`) and students by theirs
 * (`students.external_id`). A new student gets a new id, its first name and the import's tier;
 * a known one keeps its tier, and its first name follows the file. Attendance changes only
 * through school-attendance.ts, so that the links school shares imply follow it. An export speaks only
 * for the schools it lists, from its source system (run.ts): a bulk users file lists every
 * student of those schools, and one it lacks leaves them (its other schools are another export's)
 * and is otherwise kept (erasing it is `curriculum students erase --file`). A school another
 * source system keeps is a problem. A delta's tobedeleted students are erased as
 * erasure.ts erases, and only when the caller confirms it.
 *
 * Nothing but ids, first names and school names reaches the database, and problems never quote a
 * first name: the reader drops every other field (oneroster.ts).
 */
import type { Kysely } from 'kysely'
import type { TierId } from '../../domain/tiers.js'
import { organisationNames } from '../../storage/roster-repository.js'
import type { Database } from '../../storage/tables.js'
import { inTransaction } from '../../storage/transaction.js'
import type { OneRosterExport, ImportProblem, RosterSource } from '../../roster/oneroster.js'
import { ErasureNotConfirmed, RosterImportRefused } from './errors.js'
import type { PartnerLinksEnding, RosterCounts, RosterImportOptions, SchoolCoverage } from './counts.js'
import { RosterRun } from './run.js'

export { ErasureNotConfirmed, RosterImportRefused } from './errors.js'
export { KEPT_FIELDS, NEVER_KEPT } from './kept.js'
export type { PartnerLinksEnding, RosterCounts, RosterImportOptions, SchoolCoverage } from './counts.js'

/** What an export speaks for: its source system, its districts and its schools, each with who joins and leaves. */
export interface RosterCoverage {
  source: RosterSource
  districts: OneRosterExport['districts']
  schools: SchoolCoverage[]
  /** Links each partner organisation loses, most first. */
  partners: PartnerLinksEnding[]
}

export interface RosterPreview extends RosterCounts {
  coverage: RosterCoverage
  version: OneRosterExport['version']
  kind: 'bulk' | 'delta'
  mode: OneRosterExport['mode']
  tier: TierId
  skipped: OneRosterExport['skipped']
  problems: ImportProblem[]
  moreProblems: number
}

export interface RosterOutcome extends RosterCounts {
  coverage: RosterCoverage
  /** Links to partner organisations made and ended through school shares. */
  links: { made: number; ended: number }
  /** Webhook deliveries queued. */
  webhooks: number
  /** Ids of the students erased. */
  erased: string[]
  /** False when importing in batches stopped part-way (see applyRosterImport). */
  complete: boolean
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
    coverage: await coverageOf(db, run),
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
 * Imports `roster`. Throws RosterImportRefused, having written nothing, when it has a problem,
 * and ErasureNotConfirmed when it would erase without `confirmErase`. `beforeCommit` writes the
 * audit row: in the transaction, or with the last batch.
 *
 * The comparison with what is stored runs first, outside any transaction, and the writing part
 * then reads again and writes only the students it found to change, so an unchanged student
 * costs nothing while a transaction is open. A student that starts to differ in between (another
 * import's) is left to the next import.
 *
 * With `commit: 'one-transaction'` every change commits together or none does. With `batches`
 * each batch of students commits on its own and a pause follows it: on SQLite a transaction
 * holds the database's only write lock, and every student request records its disclosure with
 * it, so one transaction for a district's first import held those requests for seconds (a
 * command-line import's made them fail with 503; figures: docs/rosters.md). A run that stops
 * part-way keeps what it wrote, and running the same export again completes it, changing
 * nothing twice.
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
  const erasing = preview.counts.students.toErase
  if (erasing > 0 && options.confirmErase !== true) throw new ErasureNotConfirmed(erasing)
  const outcomeOf = async (run: RosterRun, complete: boolean): Promise<RosterOutcome> => ({
    coverage: { ...(await coverageOf(run.root, run)), schools: preview.coverage() },
    ...run.counts,
    students: {
      ...run.counts.students,
      unchanged: preview.counts.students.unchanged + run.counts.students.unchanged,
      noLongerPresent: preview.counts.students.noLongerPresent,
    },
    links: { made: run.linksMade, ended: run.linksEnded },
    webhooks: run.webhooks,
    erased: run.erased,
    complete,
  })
  if (options.commit === 'batches' && !db.isTransaction) {
    const run = new RosterRun(db, roster, options, true, preview.touched, true)
    try {
      await run.walk()
    } catch (error) {
      // What was written stays written, so it is recorded; the error says what stopped it.
      if (!(error instanceof RosterImportRefused) && beforeCommit !== undefined)
        await inTransaction(db, async (trx) => beforeCommit(trx, await outcomeOf(run, false))).catch(() => {})
      throw error
    }
    const outcome = await outcomeOf(run, true)
    if (beforeCommit !== undefined) await inTransaction(db, (trx) => beforeCommit(trx, outcome))
    return outcome
  }
  return inTransaction(db, async (trx) => {
    const run = new RosterRun(trx, roster, options, true, preview.touched)
    await run.walk()
    const outcome = await outcomeOf(run, true)
    await beforeCommit?.(trx, outcome)
    await run.numberNotices()
    return outcome
  })
}

/** The run's schools and source, with the partners whose links end named. */
async function coverageOf(db: Kysely<Database>, run: RosterRun): Promise<RosterCoverage> {
  const ending = run.linksEndedByOrganisation
  const names = await organisationNames(db, [...ending.keys()])
  return {
    source: run.roster.source,
    districts: run.roster.districts,
    schools: run.coverage(),
    partners: [...ending]
      .map(([organisationId, links]) => ({ organisationId, name: names.get(organisationId) ?? organisationId, links }))
      .sort((a, b) => b.links - a.links || a.name.localeCompare(b.name)),
  }
}
