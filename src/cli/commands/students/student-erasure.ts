/**
 * `curriculum students erase`: one student by id, or every student of a file (a school leaving).
 * Each student is erased with its audit row in one transaction (cases/erasure.ts); a
 * file is erased in batches, each committed on its own, so that on SQLite the service's requests
 * (every student request writes its disclosure row) wait for the write lock about 20 ms at most
 * between them, as with imports (imports/write-batch-size.ts). A run that stops leaves whole students
 * erased or not; running the same file again finishes it, the ids already erased being missing.
 */
import type { Kysely } from 'kysely'
import type { Engine } from '../../../storage/connection.js'
import type { ErasedStudent } from '../../../cases/erasure.js'
import type { Database } from '../../../storage/tables.js'
import { UUID } from '../../../domain/uuid.js'
import { CliError, plural } from '../../output.js'
import { count, ProgressLine } from '../../progress-bar.js'
import { fieldValue, type RecordFormat } from '../../../imports/records.js'
import { readListFile } from '../../list-file.js'
import { pauseAfterBatch, WriteBatchSize } from '../../../imports/write-batch-size.js'

/** Students per transaction on SQLite: the size follows the time each batch held the lock. */
const SQLITE_BATCH = { first: 20, min: 1, max: 500 }
/** Students per transaction on PostgreSQL, where a transaction locks only the rows it changes. */
const POSTGRES_BATCH = 200

const EXAMPLE_ID = '11111111-1111-4111-8111-111111111111'

/** The ids of an erasure file: CSV with an `id` column, or JSON Lines of `{"id": ...}`. */
export async function readErasureFile(file: string, format: RecordFormat): Promise<string[]> {
  const ids: string[] = []
  const seen = new Set<string>()
  const problems = await readListFile(
    file,
    format,
    'the file is empty; an erasure file starts with a header row: id',
    (item, problems) => {
      if (item.kind === 'header') {
        if (!item.fields.includes('id'))
          problems.push({
            file,
            line: item.line,
            message: 'the header has no id column; the file lists ids under "id"',
          })
        return
      }
      const value = fieldValue(item.values, 'id')
      const id = typeof value === 'string' ? value.trim().toLowerCase() : ''
      if (!UUID.test(id))
        problems.push({
          file,
          line: item.line,
          field: 'id',
          message: `must be a student id such as ${EXAMPLE_ID} (got ${JSON.stringify(value ?? null)})`,
        })
      else if (!seen.has(id)) {
        seen.add(id)
        ids.push(id)
      }
    },
  )
  if (problems.length > 0)
    throw new CliError(`${file}: ${plural(problems.length, 'problem')}; nothing was erased`, problems)
  return ids
}

export interface ErasureTotals {
  /** Students erased by this run. */
  erased: number
  /** Ids no student had (never stored, or erased already). */
  missing: string[]
  /** Links removed, each told to its organisation with a `student_deleted` notice. */
  links: number
  progress: number
  changes: number
  cancelledDeliveries: number
  webhooks: number
  batches: number
  /** The longest a batch took, waiting for the write lock included (ms). */
  longestBatchMs: number
}

export interface ErasureRequest {
  now: number
  /** Writes the audit row of one erased student in the transaction that erased it. */
  record(db: Kysely<Database>, student: ErasedStudent): Promise<void>
}

/**
 * Erases `ids` in committed batches (see the module comment); refuses the whole run, before
 * erasing anything, when any of them is a sandbox student.
 */
export async function eraseInBatches(
  storage: { db: Kysely<Database>; engine: Engine },
  ids: readonly string[],
  request: ErasureRequest,
): Promise<ErasureTotals> {
  const { eraseStudents, SandboxStudentError } = await import('../../../cases/erasure.js')
  const sandbox = await sandboxIds(storage.db, ids)
  if (sandbox.length > 0) throw new SandboxStudentError(sandbox)
  const totals: ErasureTotals = {
    erased: 0,
    missing: [],
    links: 0,
    progress: 0,
    changes: 0,
    cancelledDeliveries: 0,
    webhooks: 0,
    batches: 0,
    longestBatchMs: 0,
  }
  const size = storage.engine === 'sqlite' ? new WriteBatchSize(SQLITE_BATCH) : undefined
  const bar = new ProgressLine()
  try {
    for (let from = 0; from < ids.length; ) {
      const batch = ids.slice(from, from + (size?.rows ?? POSTGRES_BATCH))
      const started = performance.now()
      let outcome: Awaited<ReturnType<typeof eraseStudents>>
      try {
        outcome = await eraseStudents(storage.db, batch, request.now, request.record)
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error)
        throw new CliError(
          `erasing stopped after ${plural(from, 'student')} of ${count(ids.length)} (${reason}); ` +
            'those are erased for good, and running the same command again erases the rest',
        )
      }
      const held = performance.now() - started
      from += batch.length
      totals.batches++
      totals.longestBatchMs = Math.max(totals.longestBatchMs, Math.round(held))
      totals.erased += outcome.erased.length
      totals.missing.push(...outcome.missing)
      for (const student of outcome.erased) {
        totals.links += student.organisations.length
        totals.progress += student.progress
      }
      totals.changes += outcome.changes
      totals.cancelledDeliveries += outcome.cancelledDeliveries
      totals.webhooks += outcome.webhooks
      bar.update(`erased ${count(from)}/${count(ids.length)}`, from === ids.length)
      if (size !== undefined && from < ids.length) {
        size.record(batch.length, held)
        await pauseAfterBatch(held)
      }
    }
  } finally {
    bar.clear()
  }
  return totals
}

async function sandboxIds(db: Kysely<Database>, ids: readonly string[]): Promise<string[]> {
  const found: string[] = []
  for (let from = 0; from < ids.length; from += 500) {
    const rows = await db
      .selectFrom('students')
      .select('id')
      .where('id', 'in', ids.slice(from, from + 500))
      .where('sandbox', '=', 1)
      .execute()
    found.push(...rows.map((row) => row.id))
  }
  return found
}
