/**
 * Whether a database file's schema is exactly what the migrations make. A restore trusts nothing
 * in a backup but its rows: a trigger, view, index or table definition the backup adds or changes
 * would run inside the restored service (a trigger that deletes disclosure rows as they are
 * written, or copies first names aside before an erasure), so `backup --verify` and `restore`
 * compare the file's `sqlite_master` with a database the migrations it lists build in memory.
 */
import type SQLite from 'better-sqlite3'
import { sql } from 'kysely'
import { knownMigrations, migrate } from '../migrate.js'
import { openSqlite } from './open-sqlite.js'

/** One row of `sqlite_master`: a table, index, trigger or view. */
export interface SchemaObject {
  type: string
  name: string
  /** The table it belongs to (its own name for a table or view). */
  table: string
  /** The statement that made it; null for the indexes SQLite makes for UNIQUE and PRIMARY KEY. */
  sql: string | null
}

export interface SchemaDifference {
  /** `extra`: the file has it and the migrations do not make it; `missing`: the reverse; `changed`: made otherwise. */
  change: 'extra' | 'missing' | 'changed'
  type: string
  name: string
  table: string
}

/** What a database says of its schema: its objects, its migrations and what they were given. */
export interface SchemaFacts {
  objects: SchemaObject[]
  /** The migrations its migration table lists. */
  migrations: string[]
  /**
   * The default of `agreements.disposition_days`, which migration 0011 takes from the migrating
   * instance's AGREEMENT_DISPOSITION_DAYS; the reference is built with the same number.
   */
  dispositionDays: number | undefined
}

const OBJECTS = `select type, name, tbl_name as "table", sql from sqlite_master`

/** SQLite's statistics tables: ANALYZE makes them, and only the query planner reads them. */
const STATISTICS = /^sqlite_stat[1-4]$/

function comparable(objects: SchemaObject[]): SchemaObject[] {
  return objects.filter((object) => !(object.type === 'table' && STATISTICS.test(object.name)))
}

export function schemaFacts(database: SQLite.Database): SchemaFacts {
  const objects = comparable(database.prepare(OBJECTS).all() as SchemaObject[])
  const has = (name: string) => objects.some((object) => object.type === 'table' && object.name === name)
  const migrations = has('kysely_migration')
    ? (database.prepare('select name from kysely_migration order by timestamp, name').all() as { name: string }[]).map(
        (row) => row.name,
      )
    : []
  const column = has('agreements')
    ? (database.prepare('pragma table_info(agreements)').all() as { name: string; dflt_value: string | null }[]).find(
        (row) => row.name === 'disposition_days',
      )
    : undefined
  const days = column?.dflt_value ?? ''
  return { objects, migrations, dispositionDays: /^[0-9]{1,6}$/.test(days) ? Number(days) : undefined }
}

/** The objects the migrations up to `last` make, in a database built in memory. */
async function migratedObjects(last: string, dispositionDays: number | undefined): Promise<SchemaObject[]> {
  const storage = openSqlite('sqlite::memory:', {})
  try {
    await migrate(storage, last, dispositionDays === undefined ? {} : { agreementDispositionDays: dispositionDays })
    const { rows } = await sql<SchemaObject>`${sql.raw(OBJECTS)}`.execute(storage.db)
    return comparable(rows)
  } finally {
    await storage.close()
  }
}

/** Where a space between two words is only layout. */
const PUNCTUATION = '(),'

/**
 * `text` with each run of whitespace outside quotes made one space, and none next to a
 * parenthesis or comma: the same statement laid out otherwise compares equal, and a change inside
 * a string or a quoted name does not.
 */
export function normalisedSql(text: string | null): string | null {
  if (text === null) return null
  let out = ''
  let space = false
  let i = 0
  while (i < text.length) {
    const char = text[i]!
    if (/\s/.test(char)) {
      space = true
      i++
      continue
    }
    const close = char === '[' ? ']' : `'"\``.includes(char) ? char : undefined
    let end = i
    if (close !== undefined) {
      end = i + 1
      // A quote doubled inside its quotes stands for itself.
      while (end < text.length && (text[end] !== close || (close !== ']' && text[end + 1] === close)))
        end += text[end] === close ? 2 : 1
    }
    if (space && out !== '' && !PUNCTUATION.includes(out.at(-1)!) && !PUNCTUATION.includes(char)) out += ' '
    out += text.slice(i, end + 1)
    space = false
    i = end + 1
  }
  return out
}

/** Every object of `actual` not in `expected`, every one missing, and every one defined otherwise. */
export function compareSchemas(expected: SchemaObject[], actual: SchemaObject[]): SchemaDifference[] {
  const key = (object: SchemaObject) => `${object.type}\0${object.name}`
  const wanted = new Map(expected.map((object) => [key(object), object]))
  const seen = new Set<string>()
  const differences: SchemaDifference[] = []
  for (const object of actual) {
    const reference = wanted.get(key(object))
    const { type, name, table } = object
    // A second row of one name can only have been written into sqlite_master by hand.
    if (reference === undefined || seen.has(key(object))) differences.push({ change: 'extra', type, name, table })
    else if (reference.table !== table || normalisedSql(reference.sql) !== normalisedSql(object.sql))
      differences.push({ change: 'changed', type, name, table })
    seen.add(key(object))
  }
  for (const object of expected)
    if (!seen.has(key(object)))
      differences.push({ change: 'missing', type: object.type, name: object.name, table: object.table })
  return differences
}

/**
 * How the schema `facts` describe differs from what their migrations make; undefined when that
 * cannot be said (no migrations listed, or some unknown to this version: those are refused anyway).
 */
export async function schemaDifferences(facts: SchemaFacts): Promise<SchemaDifference[] | undefined> {
  const known = knownMigrations()
  if (facts.migrations.length === 0 || facts.migrations.some((name) => !known.includes(name))) return undefined
  const last = known.filter((name) => facts.migrations.includes(name)).at(-1)!
  return compareSchemas(await migratedObjects(last, facts.dispositionDays), facts.objects)
}

export function describeDifference({ change, type, name, table }: SchemaDifference): string {
  return `${change} ${type} ${name}${table === name ? '' : ` (on ${table})`}`
}

/** Why `file` with these differences is refused, for an operator. */
export function schemaRefusal(file: string, differences: readonly SchemaDifference[]): string {
  return (
    `${file} holds a schema the migrations do not make (${differences.map(describeDifference).join('; ')}): ` +
    'a restore takes rows from a backup and nothing else, and these would run in the restored service; the ' +
    'file was changed after it was taken, so restore another backup'
  )
}
