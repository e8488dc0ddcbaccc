/**
 * Sends the prepared queries' statements (prepared-query.ts) as named statements: PostgreSQL
 * parses and plans each once per connection instead of on every call. Kysely sends SQL text
 * and values, which node-postgres runs unnamed; this client turns a known text into a named
 * statement and leaves any other call as it was.
 */
import type PG from 'pg'
import { statementName } from '../prepared-query.js'

export function nameStatements(client: PG.PoolClient, query: PG.Client['query']): void {
  client.query = function (this: PG.PoolClient, ...args: unknown[]) {
    const [text, values] = args
    const name = typeof text === 'string' && args.length === 2 ? statementName(text) : undefined
    if (name !== undefined)
      return (query as (config: PG.QueryConfig) => unknown).call(this, {
        name,
        text: text as string,
        values: values as unknown[],
      })
    return (query as (...a: unknown[]) => unknown).apply(this, args)
  } as PG.PoolClient['query']
}
