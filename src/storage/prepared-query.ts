/**
 * Queries on the request path, built and compiled once per engine instead of on every call.
 * Building a Kysely query (operation nodes, frozen objects, then the SQL text) costs more than
 * the database spends on a primary-key lookup; the SQL text and the position of each value do
 * not change between calls, so only the values are supplied each time.
 *
 * @example
 *   const studentTier = preparedQuery((db, id: string) =>
 *     db.selectFrom('students').select('tier').where('id', '=', id))
 *   const rows = await studentTier(trx, studentId)
 */
import type { CompiledQuery, Compilable, Kysely } from 'kysely'
import type { Database } from './tables.js'

type Args = readonly (string | number | null)[]

/** A value no caller passes: it marks where an argument lands among the compiled parameters. */
const marker = (index: number): string => `\u0000argument ${index}\u0000`

export function preparedQuery<A extends Args, R>(
  build: (db: Kysely<Database>, ...args: A) => Compilable<R>,
): (db: Kysely<Database>, ...args: A) => Promise<R[]> {
  // Compiled SQL depends only on the dialect; a transaction shares its database's adapter.
  const compiled = new WeakMap<object, { query: CompiledQuery<R>; slots: readonly number[] }>()
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
      compiled.set(adapter, entry)
    }
    const { query, slots } = entry
    const parameters = slots.map((slot, i) => (slot === -1 ? query.parameters[i] : args[slot]))
    const result = await db.executeQuery<R>({ ...query, parameters })
    return result.rows
  }
}
