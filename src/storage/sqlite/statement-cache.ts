import type SQLite from 'better-sqlite3'

const STATEMENT_CACHE_SIZE = 200

/**
 * Kysely prepares every statement anew; preparing costs more than running the hot queries
 * themselves. Reusing prepared statements by SQL text is safe here: better-sqlite3 is
 * synchronous, so a statement is never in use twice at once. Bounded, because multi-row
 * inserts produce a different SQL text per row count.
 */
export function withStatementCache(database: SQLite.Database): SQLite.Database {
  const cache = new Map<string, SQLite.Statement>()
  const prepare = database.prepare.bind(database)
  return new Proxy(database, {
    get(target, property, receiver) {
      if (property !== 'prepare') return Reflect.get(target, property, receiver)
      return (source: string) => {
        let statement = cache.get(source)
        if (statement === undefined) {
          statement = prepare(source)
          if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!)
          cache.set(source, statement)
        }
        return statement
      }
    },
  })
}
