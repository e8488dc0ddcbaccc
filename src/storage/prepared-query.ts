/**
 * Queries on the request path, built and compiled once per engine instead of on every call.
 * Building a Kysely query (operation nodes, frozen objects, then the SQL text) costs more than
 * the database spends on a primary-key lookup; the SQL text and the position of each value do
 * not change between calls, so only the values are supplied each time.
 *
 * Inside a batch of SQLite's group commit (sqlite/group-commit.ts) a prepared query also skips
 * Kysely's execution: the batch's transaction is bound to a direct execution on its raw
 * connection (`runsDirectly`, sqlite/direct-statements.ts). Kysely's way to the same call (a
 * query id, its connection provider's lock, the driver, the result's plugins) is about ten
 * promise turns per statement, and an enroll that changes a tier runs four prepared queries and
 * two savepoints.
 *
 * @example
 *   const studentTier = preparedQuery((db, id: string) =>
 *     db.selectFrom('students').select('tier').where('id', '=', id))
 *   const rows = await studentTier(trx, studentId)
 */
import type { CompiledQuery, Compilable, Kysely } from 'kysely'
import type { Database } from './tables.js'

type Args = readonly (string | number | null | Uint8Array)[]

/** A value no caller passes: it marks where an argument lands among the compiled parameters. */
const marker = (index: number): string => `\u0000argument ${index}\u0000`

/**
 * The SQL text of every prepared query, with a name of its own. On PostgreSQL a statement so
 * named is parsed and planned once per connection (postgres/named-statements.ts): an unnamed one is parsed
 * and planned on every call, which costs the server more than running a primary-key lookup.
 */
const names = new Map<string, string>()

/** The name under which `sql`, the text of a prepared query, is kept on a connection; undefined for other SQL. */
export function statementName(sql: string): string | undefined {
  return names.get(sql)
}

/**
 * Runs a compiled query at once, synchronously, on the connection a transaction holds
 * (sqlite/direct-statements.ts): the rows for a statement that returns any, none otherwise, as
 * Kysely's SQLite driver answers.
 */
export interface DirectExecution {
  run<R>(query: CompiledQuery<R>, parameters: readonly unknown[]): R[]
}

/** Transactions whose prepared queries run directly: see `runsDirectly`. */
const directly = new WeakMap<Kysely<Database>, DirectExecution>()

/**
 * Lets the prepared queries given `trx` run through `execution`, on the connection `trx` holds.
 * Only for a transaction that has its connection to itself until it ends (SQLite's group
 * commit); the binding goes with `trx`.
 */
export function runsDirectly(trx: Kysely<Database>, execution: DirectExecution): void {
  directly.set(trx, execution)
}

interface Compiled<R> {
  query: CompiledQuery<R>
  slots: readonly number[]
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
      entry = { query, slots }
      if (!names.has(query.sql)) names.set(query.sql, `prepared_${names.size}`)
      compiled.set(adapter, entry)
    }
    const { query, slots } = entry
    const parameters = slots.map((slot, i) => (slot === -1 ? query.parameters[i] : args[slot]))
    const execution = directly.get(db)
    if (execution !== undefined) return execution.run(query, parameters)
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
