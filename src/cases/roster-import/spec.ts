/**
 * The OneRoster import as a format of the one run (imports/import-run.ts): read the export
 * (roster/oneroster.ts), check it against what is stored and preview it (planRosterImport), then
 * write it (applyRosterImport). The CLI's `roster import` and the dashboard's roster page each
 * choose it and say where its storage comes from.
 */
import type { Kysely } from 'kysely'
import { TIER_IDS } from '../../domain/tiers.js'
import type { ImportSpec } from '../../imports/import-run.js'
import { type OneRosterExport, readOneRoster } from '../../roster/oneroster.js'
import type { Storage } from '../../storage/storage.js'
import type { Database } from '../../storage/tables.js'
import type { RosterImportOptions } from './counts.js'
import { applyRosterImport, planRosterImport, type RosterOutcome, type RosterPreview } from './import.js'

export interface RosterImportRequest {
  /** The export: a folder, or a .zip archive. */
  source: string
  /** Opens the storage that checking and writing use, around both. */
  open<T>(work: (storage: Storage) => Promise<T>): Promise<T>
  /** The commit follows the engine: batches on SQLite, one transaction on PostgreSQL (applyRosterImport). */
  options: Omit<RosterImportOptions, 'commit'>
  /** Writes the import's audit row with `detail`: in the transaction, or with the last batch. */
  record?(trx: Kysely<Database>, detail: Record<string, unknown>): Promise<void>
}

export interface RosterWritten {
  outcome: RosterOutcome
  /** Whether SQLite's WAL was truncated after an erasure, so the erased rows leave it. */
  log: Awaited<ReturnType<Storage['truncateLog']>>
}

export type RosterImportSpec = ImportSpec<Storage, OneRosterExport, RosterPreview, RosterPreview, RosterWritten>

/** The OneRoster format for `request`; the preview is the check's own (counts, coverage, problems). */
export function rosterImport(request: RosterImportRequest): RosterImportSpec {
  const { options } = request
  // The preview's progress is its own: a caller reports the writing's.
  const { progress: _progress, ...planning } = options
  return {
    async read() {
      const roster = await readOneRoster(request.source)
      return roster.ok
        ? { ok: true, value: roster }
        : { ok: false, problems: roster.problems, more: roster.moreProblems }
    },
    open: (work) => request.open(work),
    check: (storage, roster) => planRosterImport(storage.db, roster, planning),
    problems: (preview) => ({ problems: preview.problems, more: preview.moreProblems }),
    preview: async (_storage, _roster, preview) => preview,
    async write(storage, roster) {
      const { record } = request
      const detail = {
        version: roster.version,
        kind: roster.mode.users === 'bulk' ? 'bulk' : 'delta',
        tier: options.tier ?? TIER_IDS[0],
      }
      const outcome = await applyRosterImport(
        storage.db,
        roster,
        // See applyRosterImport: on SQLite one transaction would hold the server's writes.
        { ...options, commit: storage.engine === 'sqlite' ? 'batches' : 'one-transaction' },
        record === undefined ? undefined : (trx, result) => record(trx, { ...detail, ...result }),
      )
      // The erased students' rows must not linger in SQLite's WAL.
      return { outcome, log: outcome.erased.length > 0 ? await storage.truncateLog() : 'none' }
    },
  }
}
