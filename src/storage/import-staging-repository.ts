/**
 * The staging table of an import: every row of the file, as checked, in a temporary table on
 * the import's own connection, so that a file of millions of rows costs a few MB of memory
 * whatever its size, and so that the checks that span rows (duplicates, which students are
 * stored) are single queries rather than maps of every key held in memory.
 *
 * A temporary table lives in the connection's own temporary database (SQLite) or schema
 * (PostgreSQL): writing it takes no lock on the real tables, so staging never holds up the
 * running service, and it disappears with the connection even if the process is killed.
 */
import { type Kysely, sql } from 'kysely'
import type { Database } from './tables.js'

/** One staged row. `row` is the checked row as JSON; null when the row was refused. */
interface StagedRow {
  line: number
  /** The row's identity within the file (imports/record-spec.ts, RecordImportSpec.key); null for a refused row. */
  key: string | null
  /** The student the row names, when it names one that looks like an id. */
  student: string | null
  row: string | null
}

type StagingDb = Kysely<Database & { import_rows: StagedRow }>

/** Rows per insert: four parameters each, far below both engines' limits. */
const INSERT_ROWS = 500

export class ImportStaging {
  readonly #db: StagingDb
  #pending: StagedRow[] = []

  private constructor(db: StagingDb) {
    this.#db = db
  }

  /** Creates the table on `db`, which must be one pinned connection (`db.connection()`). */
  static async create(db: Kysely<Database>): Promise<ImportStaging> {
    await sql`create temporary table import_rows (line integer primary key, key text, student text, row text)`.execute(
      db,
    )
    return new ImportStaging(db.withTables<{ import_rows: StagedRow }>())
  }

  async add(row: StagedRow): Promise<void> {
    this.#pending.push(row)
    if (this.#pending.length >= INSERT_ROWS) await this.flush()
  }

  async flush(): Promise<void> {
    if (this.#pending.length === 0) return
    const rows = this.#pending
    this.#pending = []
    await this.#db.insertInto('import_rows').values(rows).execute()
  }

  /** Rows whose key an earlier row already has, with that earlier row's line. Call after the last `add`. */
  async duplicates(): Promise<{ line: number; row: string; firstLine: number }[]> {
    await sql`create index import_rows_key on import_rows (key, line)`.execute(this.#db)
    // Grouping walks that index in order; a window function would sort every row, payload and all.
    const { rows } = await sql<{ line: number; row: string; first_line: number }>`
      select d.line, d.row, k.first_line from (
        select key, min(line) as first_line from import_rows where key is not null group by key having count(*) > 1
      ) k join import_rows d on d.key = k.key and d.line > k.first_line order by d.line`.execute(this.#db)
    return rows.map((r) => ({ line: Number(r.line), row: r.row, firstLine: Number(r.first_line) }))
  }

  /**
   * Rows naming a student that is not stored (reported only if `mustExist`) or that is a sandbox
   * student. A duplicate row is left out: the first row with its key is reported already.
   */
  async studentProblems(mustExist: boolean): Promise<{ line: number; student: string; kind: 'missing' | 'sandbox' }[]> {
    const { rows } = await sql<{ line: number; student: string; sandbox: number | null }>`
      select r.line, r.student, s.sandbox from import_rows r left join students s on s.id = r.student
      where r.student is not null
        and (r.key is null or r.line = (select min(e.line) from import_rows e where e.key = r.key))
        and (s.sandbox = 1 ${mustExist ? sql`or s.id is null` : sql``})
      order by r.line`.execute(this.#db)
    return rows.map((r) => ({
      line: Number(r.line),
      student: r.student,
      kind: r.sandbox === null ? 'missing' : 'sandbox',
    }))
  }

  /**
   * The accepted rows in key order, `size()` at a time (asked before each batch); call after
   * `duplicates` (which builds the index this walks), and only when there are none. Key order,
   * not file order, because the tables' primary keys start with the same column (the student
   * id): a batch of consecutive keys touches a few neighbouring index pages, while 2,000
   * random ids touch about 2,000 pages of a large index, and every page a transaction touches
   * is written to the WAL at its commit.
   */
  async *accepted(size: () => number): AsyncGenerator<string[]> {
    let after: string | undefined
    for (;;) {
      let query = this.#db
        .selectFrom('import_rows')
        .select(['key', 'row'])
        .where('key', 'is not', null)
        .orderBy('key')
        .limit(size())
      if (after !== undefined) query = query.where('key', '>', after)
      const rows = await query.execute()
      if (rows.length === 0) return
      after = rows.at(-1)!.key!
      yield rows.map((r) => r.row!)
    }
  }

  async drop(): Promise<void> {
    await sql`drop table if exists import_rows`.execute(this.#db)
  }
}
