/**
 * The files of a roster export, from a folder or from a .zip archive alike: each wanted file is
 * absent, refused (with the reason), or present with its size and a stream of its bytes. Only
 * the names asked for are looked at, and only at the top level of the folder or archive.
 */
import fs from 'node:fs'
import path from 'node:path'
import { openZip, readZipEntry, ZipError, type ZipArchive, type ZipEntry } from '../imports/zip-reader.js'

export type RosterFile =
  | { kind: 'absent'; message?: string }
  | { kind: 'refused'; message: string }
  | { kind: 'present'; size: number; read(): AsyncIterable<Uint8Array> }

export interface FileLimits {
  /** Largest file read, in bytes after decompression. */
  maxFileBytes: number
  /** Most entries an archive may list. */
  maxZipEntries: number
  /** Largest ratio of an entry's size to its compressed size, for entries over a mebibyte. */
  maxCompressionRatio: number
}

export type OpenedExport = { ok: true; file(name: string): RosterFile } | { ok: false; message: string }

/** Reads are in 256 KiB chunks, as the existing importer's are (imports/records.ts). */
const CHUNK_BYTES = 1 << 18
/** Below this size a high compression ratio is harmless, and small files of blanks reach it. */
const RATIO_CHECKED_FROM = 1 << 20

export async function openExport(source: string, names: readonly string[], limits: FileLimits): Promise<OpenedExport> {
  let stat: fs.Stats
  try {
    stat = await fs.promises.stat(source)
  } catch {
    return { ok: false, message: 'cannot be read: no such folder or file' }
  }
  if (stat.isDirectory()) return { ok: true, file: await folderFiles(source, names, limits) }
  if (!stat.isFile()) return { ok: false, message: 'is neither a folder nor a .zip file' }
  let zip: ZipArchive
  try {
    zip = await openZip(source, limits.maxZipEntries)
  } catch (error) {
    if (error instanceof ZipError) return { ok: false, message: error.message }
    throw error
  }
  return { ok: true, file: zipFiles(zip, names, limits) }
}

async function folderFiles(
  folder: string,
  names: readonly string[],
  limits: FileLimits,
): Promise<(name: string) => RosterFile> {
  const files = new Map<string, RosterFile>()
  for (const name of names) {
    const file = path.join(folder, name)
    let stat: fs.Stats
    try {
      stat = await fs.promises.stat(file)
    } catch {
      continue
    }
    if (!stat.isFile()) files.set(name, { kind: 'refused', message: 'is not a file' })
    else if (stat.size > limits.maxFileBytes) files.set(name, { kind: 'refused', message: tooLarge(limits) })
    else
      files.set(name, {
        kind: 'present',
        size: stat.size,
        read: () => fs.createReadStream(file, { highWaterMark: CHUNK_BYTES }),
      })
  }
  return (name) => files.get(name) ?? { kind: 'absent' }
}

function zipFiles(zip: ZipArchive, names: readonly string[], limits: FileLimits): (name: string) => RosterFile {
  const wanted = new Set(names)
  const found = new Map<string, ZipEntry[]>()
  const nested = new Map<string, string>()
  for (const entry of zip.entries) {
    if (wanted.has(entry.name)) {
      const list = found.get(entry.name) ?? []
      list.push(entry)
      found.set(entry.name, list)
      continue
    }
    // An archive of the export's folder rather than of its files: say so instead of "missing".
    const slash = Math.max(entry.name.lastIndexOf('/'), entry.name.lastIndexOf('\\'))
    const base = entry.name.slice(slash + 1)
    if (slash >= 0 && wanted.has(base) && !nested.has(base)) nested.set(base, entry.name)
  }
  const files = new Map<string, RosterFile>()
  for (const name of names) {
    const entries = found.get(name)
    if (entries === undefined) {
      if (nested.has(name))
        files.set(name, {
          kind: 'absent',
          message:
            'is inside a folder of the archive, not at its top level: zip the files themselves, not their folder',
        })
      continue
    }
    const entry = entries[0]!
    if (entries.length > 1) files.set(name, { kind: 'refused', message: 'appears twice in the archive' })
    else if (entry.uncompressedSize > limits.maxFileBytes)
      files.set(name, { kind: 'refused', message: tooLarge(limits) })
    else if (
      entry.uncompressedSize > RATIO_CHECKED_FROM &&
      entry.uncompressedSize > limits.maxCompressionRatio * entry.compressedSize
    )
      files.set(name, {
        kind: 'refused',
        message:
          `is compressed more than ${limits.maxCompressionRatio} to 1, far more than roster data is: ` +
          'refused as a possible zip bomb',
      })
    else if (entry.encrypted)
      files.set(name, { kind: 'refused', message: 'is encrypted; export the roster without a password' })
    else files.set(name, { kind: 'present', size: entry.uncompressedSize, read: () => readZipEntry(zip, entry) })
  }
  return (name) => files.get(name) ?? { kind: 'absent' }
}

function tooLarge(limits: FileLimits): string {
  return `is larger than ${limits.maxFileBytes.toLocaleString('en-US')} bytes, the most a roster file may hold`
}
