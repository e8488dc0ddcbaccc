/**
 * A test's PostgreSQL schema, made from a script instead of by running every migration again:
 * each test worker migrates one schema (and stores the sample catalog in it, for the tests that
 * want it), dumps it with pg_dump (tables, indexes, triggers and their rows, among them Kysely's
 * record of the migrations applied), drops it, and replays that script into each new schema in
 * one round trip (figures: docs/testing.md). test/storage/migrated-schema.test.ts holds that a
 * replayed schema is the migrated one. Without pg_dump, each schema is migrated as before.
 */
import { execFile } from 'node:child_process'
import path from 'node:path'
import { promisify } from 'node:util'
import { sql } from 'kysely'
import type { Storage } from '../../src/storage/connection.js'
import { postgresBin } from './postgres-bin.js'

const run = promisify(execFile)

/** Stands for the schema's name in the script. */
const SCHEMA = '__schema__'

/** Lines of pg_dump's output that set the dumping session up, not the schema: the replay keeps its own search_path. */
const SESSION_LINE = /^(--|\\|SET |SELECT pg_catalog\.set_config)/

/** The scripts made in this worker, by database URL (without the schema) and whether the catalog is in. */
const scripts = new Map<string, Promise<string | undefined>>()

/**
 * The script that makes a migrated schema in the database of `url` (a `?schema=` URL), with the
 * sample catalog or without, made once per worker from `migrated(database)`: a schema just
 * migrated there (holding the catalog or not, as asked), which its own close drops. Undefined
 * without pg_dump.
 */
export function migratedSchemaScript(
  url: string,
  catalog: boolean,
  migrated: (database: string) => Promise<Storage>,
): Promise<string | undefined> {
  const parsed = new URL(url)
  parsed.searchParams.delete('schema')
  const database = parsed.toString()
  const key = `${catalog} ${database}`
  let script = scripts.get(key)
  if (script === undefined) {
    script = dumpOnce(database, migrated)
    scripts.set(key, script)
  }
  return script
}

async function dumpOnce(
  database: string,
  migrated: (database: string) => Promise<Storage>,
): Promise<string | undefined> {
  const bin = postgresBin()
  if (bin === undefined) return undefined
  const storage = await migrated(database)
  try {
    const { stdout } = await run(
      path.join(bin, 'pg_dump'),
      [
        `--dbname=${database}`,
        `--schema=${storage.schema!}`,
        '--inserts',
        '--no-owner',
        '--no-privileges',
        '--no-comments',
      ],
      { maxBuffer: 16 << 20 },
    )
    return stdout
      .split('\n')
      .filter((line) => !SESSION_LINE.test(line))
      .join('\n')
      .replaceAll(storage.schema!, SCHEMA)
  } finally {
    await storage.close()
  }
}

/** Makes `storage`'s schema (which must not exist yet) from the script, in one statement batch and one transaction. */
export async function replaySchema(storage: Storage, made: string): Promise<void> {
  // Several statements in one query text go as one simple-protocol message, run as one transaction.
  await sql.raw(made.replaceAll(SCHEMA, storage.schema!)).execute(storage.db)
}
