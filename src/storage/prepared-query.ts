/**
 * Queries on the request path, built and compiled once per engine instead of on every call.
 * Building a Kysely query (operation nodes, frozen objects, then the SQL text) costs more than
 * the database spends on a primary-key lookup; the SQL text and the position of each value do
 * not change between calls, so only the values are supplied each time.
 *
 * Inside a batch of SQLite's group commit (write-queue.ts) a prepared query also skips Kysely's
 * execution: the batch's transaction is bound to its raw better-sqlite3 connection, and the
 * statement, prepared there once, runs at once. Kysely's way to the same call (a query id, its
 * connection provider's lock, the driver, the result's plugins) is about ten promise turns per
 * statement, and an enroll that changes a tier runs four prepared queries and two savepoints.
 *
 * @example
 *   const studentTier = preparedQuery((db, id: string) =>
 *     db.selectFrom('students').select('tier').where('id', '=', id))
 *   const rows = await studentTier(trx, studentId)
 */
import type SQLite from 'better-sqlite3'
import type { CompiledQuery, Compilable, Kysely } from 'kysely'
import type { Database } from './tables.js'

type Args = readonly (string | number | null)[]

/** A value no caller passes: it marks where an argument lands among the compiled parameters. */
const marker = (index: number): string => `\u0000argument ${index}\u0000`

/**
 * The SQL text of every prepared query, with a name of its own. On PostgreSQL a statement so
 * named is parsed and planned once per connection (connection.ts): an unnamed one is parsed
 * and planned on every call, which costs the server more than running a primary-key lookup.
 */
const names = new Map<string, string>()

/** The name under which `sql`, the text of a prepared query, is kept on a connection; undefined for other SQL. */
export function statementName(sql: string): string | undefined {
  return names.get(sql)
}

/** Transactions whose statements may run directly on their connection: see `runsOn`. */
const connections = new WeakMap<Kysely<Database>, SQLite.Database>()

/**
 * Lets the prepared queries given `trx` run synchronously on `connection`, the one `trx` holds.
 * Only for a transaction that has its connection to itself until it ends (the group commit's);
 * the binding goes with `trx`.
 */
export function runsOn(trx: Kysely<Database>, connection: SQLite.Database): void {
  connections.set(trx, connection)
}

interface Compiled<R> {
  query: CompiledQuery<R>
  slots: readonly number[]
  /** The statement prepared on each raw connection it ran on. */
  statements: WeakMap<SQLite.Database, SQLite.Statement>
}

export function preparedQuery<A extends Args, R>(
  build: (db: Kysely<Database>, ...args: A) => Compilable<R>,
): (db: Kysely<Database>, ...args: A) => Promise<R[]> {
  // Compiled SQL depends only on the dialect; a transaction shares its database's adapter.
  const compiled = new WeakMap<object, Compiled<R>>()
  return async (db, ...args) => {
    const adapter = db.getExecutor().adapter
    let entry = compiled.get(adapter)
    if (entry === undefined) {
      const markers = args.map((_, index) => marker(index)) as unknown as A
      const query = build(db, ...markers).compile()
      // -1: a constant of the query itself, kept as compiled.
      const slots = query.parameters.map((value) => markers.indexOf(value as never))
      for (let i = 0; i < args.length; i++) {
        if (!slots.includes(i)) throw new Error(`preparedQuery: argument ${i} does not become a query parameter`)
      }
      entry = { query, slots, statements: new WeakMap() }
      if (!names.has(query.sql)) names.set(query.sql, `prepared_${names.size}`)
      compiled.set(adapter, entry)
    }
    const { query, slots } = entry
    const parameters = slots.map((slot, i) => (slot === -1 ? query.parameters[i] : args[slot]))
    const connection = connections.get(db)
    if (connection !== undefined) {
      let statement = entry.statements.get(connection)
      if (statement === undefined) {
        statement = connection.prepare(query.sql)
        entry.statements.set(connection, statement)
      }
      // As Kysely's SQLite driver answers: rows for a statement that returns any, none otherwise.
      if (statement.reader) return statement.all(parameters) as R[]
      statement.run(parameters)
      return []
    }
    const result = await db.executeQuery<R>({ ...query, parameters })
    return result.rows
  }
}

/**
 * A prepared query whose shape depends on a count of rows (a multi-row statement): one
 * `preparedQuery` per count, made when that count is first asked for. Callers pass chunks of a
 * bounded size, so only a few are ever made.
 */
export function preparedBySize<A extends Args, R>(
  build: (size: number) => (db: Kysely<Database>, ...args: A) => Compilable<R>,
): (size: number) => (db: Kysely<Database>, ...args: A) => Promise<R[]> {
  const bySize = new Map<number, (db: Kysely<Database>, ...args: A) => Promise<R[]>>()
  return (size) => {
    let query = bySize.get(size)
    if (query === undefined) {
      query = preparedQuery(build(size))
      bySize.set(size, query)
    }
    return query
  }
}
