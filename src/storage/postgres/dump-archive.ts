/**
 * Reads the table of contents of a pg_dump custom-format archive (`pg_dump --format=custom`):
 * each entry's SQL exactly as pg_restore will run it, without running anything. Rendering the
 * archive as a script (`pg_restore --file=-`) would not do: there a table's COPY statement and its
 * rows run together, so SQL hidden after a COPY statement would read as rows.
 *
 * The layout is pg_dump's own (src/bin/pg_dump/pg_backup_archiver.c, ReadHead and ReadToc;
 * pg_backup_custom.c, _ReadExtraToc): archive versions 1.12 (PostgreSQL 11) to 1.16 (17).
 */
import fs from 'node:fs'

/** The file is not a custom-format archive this code can read; the message says why. */
export class DumpArchiveError extends Error {
  override name = 'DumpArchiveError'
}

/** One entry of the table of contents. */
export interface DumpEntry {
  dumpId: number
  /** What it is: `TABLE`, `INDEX`, `TRIGGER`, `TABLE DATA`, `FUNCTION`... */
  desc: string
  /** Its name (`students`; `disclosures forget` for a trigger; `f()` for a function). */
  tag: string
  /** Its schema; empty for objects of no schema. */
  namespace: string
  /** What pg_restore runs to make it, to drop it (`--clean`) and to load its rows. */
  defn: string
  dropStmt: string
  copyStmt: string
  tablespace: string
  tableam: string
}

export interface DumpArchive {
  /** Archive format version, as `1.14`. */
  version: string
  /** The pg_dump that made it. */
  dumpedBy: string
  entries: DumpEntry[]
}

const MAGIC = 'PGDMP'
const CUSTOM_FORMAT = 1
const OLDEST = 12
const NEWEST = 16

/** Reads integers and strings as pg_dump wrote them, failing on a short or absurd file. */
class Reader {
  #at = 0
  intSize = 4
  offSize = 8
  constructor(readonly bytes: Buffer) {}

  byte(): number {
    if (this.#at >= this.bytes.length) throw new DumpArchiveError('the archive ends in the middle of its contents')
    return this.bytes[this.#at++]!
  }

  /** A sign byte, then `intSize` bytes, least significant first. */
  int(): number {
    const negative = this.byte() !== 0
    let value = 0
    for (let i = 0; i < this.intSize; i++) value += this.byte() * 2 ** (8 * i)
    return negative ? -value : value
  }

  /** A length, then that many bytes; null for a length of -1. */
  string(): string | null {
    const length = this.int()
    if (length < 0) return null
    if (this.#at + length > this.bytes.length)
      throw new DumpArchiveError('the archive ends in the middle of its contents')
    const text = this.bytes.toString('utf8', this.#at, this.#at + length)
    this.#at += length
    return text
  }

  text(): string {
    return this.string() ?? ''
  }

  /** A data offset: a flag byte, then `offSize` bytes. */
  offset(): void {
    this.byte()
    for (let i = 0; i < this.offSize; i++) this.byte()
  }
}

function readHead(reader: Reader): { minor: number; dumpedBy: string } {
  if (reader.bytes.toString('latin1', 0, MAGIC.length) !== MAGIC)
    throw new DumpArchiveError('it is not a pg_dump custom-format archive (pg_dump --format=custom)')
  for (let i = 0; i < MAGIC.length; i++) reader.byte()
  const major = reader.byte()
  const minor = reader.byte()
  reader.byte()
  if (major !== 1 || minor < OLDEST || minor > NEWEST)
    throw new DumpArchiveError(
      `its archive version ${major}.${minor} is not one this check reads (1.${OLDEST} to 1.${NEWEST}, ` +
        'pg_dump 11 to 17)',
    )
  reader.intSize = reader.byte()
  reader.offSize = reader.byte()
  if (reader.intSize < 1 || reader.intSize > 8 || reader.offSize < 1 || reader.offSize > 16)
    throw new DumpArchiveError('its header is damaged')
  if (reader.byte() !== CUSTOM_FORMAT)
    throw new DumpArchiveError('it is not a pg_dump custom-format archive (pg_dump --format=custom)')
  if (minor >= 15) reader.byte()
  else reader.int()
  for (let i = 0; i < 7; i++) reader.int()
  reader.string()
  reader.string()
  return { minor, dumpedBy: reader.text() }
}

function readEntry(reader: Reader, minor: number): DumpEntry {
  const dumpId = reader.int()
  reader.int()
  reader.string()
  reader.string()
  const tag = reader.text()
  const desc = reader.text()
  reader.int()
  const defn = reader.text()
  const dropStmt = reader.text()
  const copyStmt = reader.text()
  const namespace = reader.text()
  const tablespace = reader.text()
  const tableam = reader.text()
  if (minor >= 16) reader.int()
  reader.string()
  reader.string()
  while (reader.string() !== null) {
    // Its dependencies: the order pg_restore follows, not what it runs.
  }
  reader.offset()
  return { dumpId, desc, tag, namespace, defn, dropStmt, copyStmt, tablespace, tableam }
}

/** The archive `file`'s table of contents; throws DumpArchiveError when it cannot be read. */
export function readDumpArchive(file: string): DumpArchive {
  let bytes: Buffer
  try {
    bytes = fs.readFileSync(file)
  } catch (error) {
    throw new DumpArchiveError(`cannot read it: ${(error as Error).message}`)
  }
  const reader = new Reader(bytes)
  const { minor, dumpedBy } = readHead(reader)
  const count = reader.int()
  if (count < 0 || count > 1_000_000) throw new DumpArchiveError('its table of contents is damaged')
  const entries: DumpEntry[] = []
  for (let i = 0; i < count; i++) entries.push(readEntry(reader, minor))
  return { version: `1.${minor}`, dumpedBy, entries }
}
