/**
 * The request log's rows (migration 0026): written in chunks by services/request-log.ts, read by
 * cases/request-log-read.ts, pruned by the retention pruner.
 */
import type { Kysely } from 'kysely'
import { preparedBySize } from './prepared-query.js'
import type { Database } from './tables.js'

/** One answered request, as the log keeps it. */
export interface RequestLogEntry {
  /** Milliseconds since the epoch. */
  readonly at: number
  readonly organisationId: string
  readonly keyId: string
  readonly method: string
  /** The route template, never the raw path. */
  readonly route: string
  readonly status: number
  /** The problem's code, when the answer was a problem. */
  readonly problem: string | null
  readonly latencyMs: number
  readonly requestId: string
  readonly address: string
}

const COLUMNS = 10

const insertStatement = preparedBySize(
  (size) =>
    (db, ...args: (string | number | null)[]) =>
      db.insertInto('request_log').values(
        Array.from({ length: size }, (_, i) => ({
          at: args[COLUMNS * i] as number,
          organisation_id: args[COLUMNS * i + 1] as string,
          key_id: args[COLUMNS * i + 2] as string,
          method: args[COLUMNS * i + 3] as string,
          route: args[COLUMNS * i + 4] as string,
          status: args[COLUMNS * i + 5] as number,
          problem: args[COLUMNS * i + 6] as string | null,
          latency_ms: args[COLUMNS * i + 7] as number,
          request_id: args[COLUMNS * i + 8] as string,
          address: args[COLUMNS * i + 9] as string,
        })),
      ),
)

/** Appends `entries` in one statement. */
export async function appendRequestLog(db: Kysely<Database>, entries: readonly RequestLogEntry[]): Promise<void> {
  if (entries.length === 0) return
  const args: (string | number | null)[] = []
  for (const e of entries)
    args.push(
      e.at,
      e.organisationId,
      e.keyId,
      e.method,
      e.route,
      e.status,
      e.problem,
      e.latencyMs,
      e.requestId,
      e.address,
    )
  await insertStatement(entries.length)(db, ...args)
}
