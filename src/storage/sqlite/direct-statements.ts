/**
 * Prepared queries run directly on a raw better-sqlite3 connection (`DirectExecution`,
 * prepared-query.ts): each statement is prepared there once and runs at once, synchronously.
 * SQLite's group commit binds its batches to this (group-commit.ts); better-sqlite3 is
 * synchronous, so a statement is never in use twice at once.
 */
import type SQLite from 'better-sqlite3'
import type { CompiledQuery } from 'kysely'
import type { DirectExecution } from '../prepared-query.js'

export function directStatements(connection: SQLite.Database): DirectExecution {
  // Keyed by the compiled query, which a prepared query keeps for as long as it exists.
  const statements = new WeakMap<CompiledQuery, SQLite.Statement>()
  return {
    run<R>(query: CompiledQuery<R>, parameters: readonly unknown[]): R[] {
      let statement = statements.get(query)
      if (statement === undefined) {
        statement = connection.prepare(query.sql)
        statements.set(query, statement)
      }
      // As Kysely's SQLite driver answers: rows for a statement that returns any, none otherwise.
      if (statement.reader) return statement.all(parameters) as R[]
      statement.run(parameters)
      return []
    },
  }
}
