/**
 * Looks for a string everywhere a database could hold it: every column of every table (cast to
 * text), and on SQLite the bytes of the database file and its WAL, freed pages included.
 */
import fs from 'node:fs'
import { sql } from 'kysely'
import type { Storage } from '../../src/storage/connection.js'
import { sqliteFile } from '../../src/storage/sqlite/open-sqlite.js'

/** `table.column` of every column whose value contains `needle` in some row. */
export async function columnsHolding(storage: Storage, needle: string): Promise<string[]> {
  const columns =
    storage.engine === 'sqlite'
      ? (
          await sql<{ table_name: string; column_name: string }>`
            select m.name as table_name, p.name as column_name
            from sqlite_master as m, pragma_table_info(m.name) as p
            where m.type = 'table'`.execute(storage.db)
        ).rows
      : (
          await sql<{ table_name: string; column_name: string }>`
            select table_name, column_name from information_schema.columns
            where table_schema = current_schema()`.execute(storage.db)
        ).rows
  if (columns.length < 20) throw new Error(`only ${columns.length} columns found: the scan itself is broken`)
  const found: string[] = []
  for (const { table_name, column_name } of columns) {
    const column = sql.ref(column_name)
    const holds =
      storage.engine === 'sqlite'
        ? sql`instr(cast(${column} as text), ${needle}) > 0`
        : sql`strpos(${column}::text, ${needle}) > 0`
    const { rows } = await sql<{ n: number | string }>`
      select count(*) as n from ${sql.table(table_name)} where ${holds}`.execute(storage.db)
    if (Number(rows[0]!.n) > 0) found.push(`${table_name}.${column_name}`)
  }
  return found
}

/** Which of the SQLite database's files (the database, its WAL) hold `needle` anywhere in their bytes. */
export function sqliteFilesHolding(url: string, needle: string): string[] {
  const file = sqliteFile(url)
  return [file, `${file}-wal`].filter((path) => fs.existsSync(path) && fs.readFileSync(path).includes(needle))
}
