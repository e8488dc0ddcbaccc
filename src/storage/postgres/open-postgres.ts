/**
 * PostgreSQL storage: a pg pool with connection and statement timeouts, `?schema=<name>` in the
 * URL for a schema of its own (which lets test runs and tenants share one database without
 * colliding; migrations create it), and the prepared queries sent as named statements.
 */
import { createRequire } from 'node:module'
import { Kysely, PostgresDialect, sql } from 'kysely'
import type PG from 'pg'
import type { Storage } from '../storage.js'
import type { Database } from '../tables.js'
import { advisoryLocks } from './advisory-locks.js'
import { directWriteQueue } from './direct-writes.js'
import { tracedWrites } from '../traced-writes.js'
import { nameStatements } from './named-statements.js'

export interface PostgresOptions {
  /** PostgreSQL pool size. */
  poolSize?: number
  /** PostgreSQL: connection and statement timeout (ms). */
  timeoutMs?: number
}

// Loaded only when PostgreSQL is used: an SQLite deployment starts sooner without it (figures: docs/performance.md).
const requireModule = createRequire(import.meta.url)

export function openPostgres(url: string, options: PostgresOptions): Storage {
  const pg = requireModule('pg') as typeof PG
  /** pg returns int8 (counts, bigserial ids) as strings; every such value here fits in a double. */
  const pgTypes = {
    getTypeParser(oid: number, format?: 'text' | 'binary') {
      if (oid === 20) return (value: string) => Number(value)
      return pg.types.getTypeParser(oid, format as 'text')
    },
  }
  const parsed = new URL(url)
  const schema = parsed.searchParams.get('schema') ?? undefined
  if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new Error('the schema in DATABASE_URL must be a lower-case SQL identifier')
  }
  parsed.searchParams.delete('schema')
  const timeoutMs = options.timeoutMs ?? 5000
  const pool = new pg.Pool({
    connectionString: parsed.toString(),
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: timeoutMs,
    statement_timeout: timeoutMs,
    query_timeout: timeoutMs + 500,
    types: pgTypes,
    ...(schema === undefined ? {} : { options: `-c search_path=${schema}` }),
  })
  // A client that loses its server emits 'error' (on the pool while idle, on itself while
  // checked out); without listeners the process would crash. The query in flight is rejected
  // anyway and answers 503, and the pool replaces the client.
  pool.on('error', () => {})
  pool.on('connect', (client) => {
    client.on('error', () => {})
    nameStatements(client, pg.Client.prototype.query)
  })
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  return {
    db,
    engine: 'postgres',
    schema,
    writes: tracedWrites(directWriteQueue(db), 'postgresql'),
    reader: undefined,
    keyLookups: db,
    locks: advisoryLocks,
    // PostgreSQL places rows its own way: the order given is as good as any.
    keysInRowOrder: async (keyIds) => [...keyIds],
    // The server owns PostgreSQL's WAL and recycles its segments; nothing to do from here.
    truncateLog: async () => 'none',
    async ping() {
      await sql`select 1`.execute(db)
    },
    async close() {
      await db.destroy()
    },
  }
}
