/**
 * How a dump's table of contents differs from the one pg_dump writes for the schema the
 * migrations make (dump-inspection.ts builds that one). pg_restore runs each entry's SQL as it
 * stands in the archive, so every entry must be one the migrations make, with the same SQL: a
 * trigger, function, view, index or column added to a dump would otherwise run inside the restored
 * service. Rows are what a dump brings; the COPY statements that load them are checked too.
 */
import type { DumpEntry } from './dump-archive.js'

export interface DumpDifference {
  /** `extra`: in the dump and not made by the migrations; `missing`: the reverse; `changed`: made otherwise. */
  change: 'extra' | 'missing' | 'changed'
  desc: string
  tag: string
  namespace: string
}

/** Restored only by `pg_restore --create`, which the printed restore command does not use. */
const CREATE_ONLY = new Set(['DATABASE', 'DATABASE PROPERTIES'])

/** The client encoding the dump was written in: any of PostgreSQL's encoding names. */
const ENCODING = /^SET client_encoding = '[A-Za-z0-9_]+';\n$/

/** A sequence's value: `SELECT pg_catalog.setval('<schema>.<sequence>', <n>, <called>);` */
const SETVAL = /^(SELECT pg_catalog\.setval\('[^']*', )[0-9]+, (?:true|false)\);\n$/

function comparable(entry: DumpEntry): DumpEntry {
  if (entry.desc === 'ENCODING' && ENCODING.test(entry.defn)) return { ...entry, defn: 'ENCODING' }
  if (entry.desc === 'SEQUENCE SET') return { ...entry, defn: entry.defn.replace(SETVAL, '$1N, B);\n') }
  return entry
}

function sameSql(a: DumpEntry, b: DumpEntry): boolean {
  return (
    a.defn === b.defn &&
    a.dropStmt === b.dropStmt &&
    a.copyStmt === b.copyStmt &&
    a.tablespace === b.tablespace &&
    a.tableam === b.tableam
  )
}

/**
 * The entries of `actual` (a dump of the schema `schema`) that `expected` (the migrations' schema,
 * dumped and renamed to `schema`) lacks, those missing, and those whose SQL differs. The entry
 * that creates the schema itself may be absent: a dump of a whole database has none.
 */
export function compareDumpEntries(
  expected: readonly DumpEntry[],
  actual: readonly DumpEntry[],
  schema: string,
): DumpDifference[] {
  const key = (entry: DumpEntry) => `${entry.desc}\0${entry.namespace}\0${entry.tag}`
  const wanted = new Map(expected.filter((e) => !CREATE_ONLY.has(e.desc)).map((e) => [key(e), comparable(e)]))
  const seen = new Set<string>()
  const differences: DumpDifference[] = []
  for (const entry of actual) {
    if (CREATE_ONLY.has(entry.desc)) continue
    const { desc, tag, namespace } = entry
    const reference = wanted.get(key(entry))
    if (reference === undefined || seen.has(key(entry))) differences.push({ change: 'extra', desc, tag, namespace })
    else if (!sameSql(reference, comparable(entry))) differences.push({ change: 'changed', desc, tag, namespace })
    seen.add(key(entry))
  }
  for (const [name, entry] of wanted) {
    const optional = entry.desc === 'SCHEMA' && entry.tag === schema
    if (!seen.has(name) && !optional)
      differences.push({ change: 'missing', desc: entry.desc, tag: entry.tag, namespace: entry.namespace })
  }
  return differences
}

/** `extra TRIGGER disclosures forget`, with the schema when it is another than the dump's. */
export function describeDumpDifference(difference: DumpDifference, schema: string): string {
  const { change, desc, tag, namespace } = difference
  return `${change} ${desc} ${namespace === '' || namespace === schema ? '' : `${namespace}.`}${tag}`
}
