/**
 * Reads the entries of a .zip archive as districts' systems export rosters: the central
 * directory at the end of the file, and entries stored or deflated. Only what a roster needs is
 * supported; anything else is refused with a reason rather than guessed at: ZIP64 archives,
 * archives spanning several disks, encrypted entries and other compression methods.
 *
 * Nothing is ever written to disk, so an entry's name is only compared with the names wanted,
 * never used as a path. An entry is inflated as a stream and stopped as soon as it yields more
 * than the size its directory record declares, and that size is itself bounded by the caller,
 * so a small archive cannot expand without limit (a "zip bomb").
 */
import fs from 'node:fs'
import { pipeline } from 'node:stream'
import zlib from 'node:zlib'

/** A refusal or damage found in the archive; its message names no content of the archive. */
export class ZipError extends Error {
  override name = 'ZipError'
}

export interface ZipEntry {
  name: string
  method: number
  encrypted: boolean
  crc32: number
  compressedSize: number
  uncompressedSize: number
  localHeaderOffset: number
}

export interface ZipArchive {
  file: string
  size: number
  /** Where the central directory starts: no entry's data may reach past it. */
  directoryOffset: number
  entries: ZipEntry[]
}

const END_OF_DIRECTORY = 0x06054b50
const ZIP64_LOCATOR = 0x07064b50
const DIRECTORY_ENTRY = 0x02014b50
const LOCAL_HEADER = 0x04034b50
const END_RECORD_BYTES = 22
const MAX_COMMENT_BYTES = 0xffff
const DIRECTORY_ENTRY_BYTES = 46
const LOCAL_HEADER_BYTES = 30
const UTF8_NAMES = 0x800
const STORED = 0
const DEFLATED = 8

async function readAt(handle: fs.promises.FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length)
  const { bytesRead } = await handle.read(buffer, 0, length, position)
  if (bytesRead !== length) throw new ZipError('is cut short: the archive ends before its directory does')
  return buffer
}

/** The archive's directory; throws ZipError when the file is not an archive this reader reads. */
export async function openZip(file: string, maxEntries: number): Promise<ZipArchive> {
  const handle = await fs.promises.open(file, 'r')
  try {
    const { size } = await handle.stat()
    if (size < END_RECORD_BYTES) throw new ZipError('is not a .zip archive')
    const tailLength = Math.min(size, END_RECORD_BYTES + MAX_COMMENT_BYTES)
    const tail = await readAt(handle, size - tailLength, tailLength)
    // The end record is the last signature whose comment reaches exactly to the end of the file.
    let at = -1
    for (let i = tail.length - END_RECORD_BYTES; i >= 0; i--) {
      if (
        tail.readUInt32LE(i) === END_OF_DIRECTORY &&
        i + END_RECORD_BYTES + tail.readUInt16LE(i + 20) === tail.length
      ) {
        at = i
        break
      }
    }
    if (at < 0) throw new ZipError('is not a .zip archive (no end of central directory)')
    const disk = tail.readUInt16LE(at + 4)
    const directoryDisk = tail.readUInt16LE(at + 6)
    const entriesHere = tail.readUInt16LE(at + 8)
    const entryCount = tail.readUInt16LE(at + 10)
    const directorySize = tail.readUInt32LE(at + 12)
    const directoryOffset = tail.readUInt32LE(at + 16)
    const endOffset = size - tailLength + at
    if (disk !== 0 || directoryDisk !== 0 || entriesHere !== entryCount)
      throw new ZipError('spans several disks; export it as one .zip file')
    const zip64 =
      entryCount === 0xffff ||
      directorySize === 0xffffffff ||
      directoryOffset === 0xffffffff ||
      (at >= 20 && tail.readUInt32LE(at - 20) === ZIP64_LOCATOR)
    if (zip64) throw new ZipError('is a ZIP64 archive, which is not read; export the roster as a plain .zip')
    if (entryCount > maxEntries) throw new ZipError(`holds more than ${maxEntries} entries, more than a roster export`)
    if (directoryOffset + directorySize > endOffset) throw new ZipError('is damaged: its directory lies outside it')

    const directory = await readAt(handle, directoryOffset, directorySize)
    const entries: ZipEntry[] = []
    let offset = 0
    for (let n = 0; n < entryCount; n++) {
      if (offset + DIRECTORY_ENTRY_BYTES > directory.length || directory.readUInt32LE(offset) !== DIRECTORY_ENTRY)
        throw new ZipError('is damaged: its directory does not list the entries it counts')
      const flags = directory.readUInt16LE(offset + 8)
      const nameLength = directory.readUInt16LE(offset + 28)
      const extraLength = directory.readUInt16LE(offset + 30)
      const commentLength = directory.readUInt16LE(offset + 32)
      const entry: ZipEntry = {
        name: '',
        method: directory.readUInt16LE(offset + 10),
        encrypted: (flags & 1) !== 0,
        crc32: directory.readUInt32LE(offset + 16),
        compressedSize: directory.readUInt32LE(offset + 20),
        uncompressedSize: directory.readUInt32LE(offset + 24),
        localHeaderOffset: directory.readUInt32LE(offset + 42),
      }
      if (directory.readUInt16LE(offset + 34) !== 0)
        throw new ZipError('spans several disks; export it as one .zip file')
      if (
        entry.compressedSize === 0xffffffff ||
        entry.uncompressedSize === 0xffffffff ||
        entry.localHeaderOffset === 0xffffffff
      )
        throw new ZipError('is a ZIP64 archive, which is not read; export the roster as a plain .zip')
      const nameStart = offset + DIRECTORY_ENTRY_BYTES
      if (nameStart + nameLength > directory.length)
        throw new ZipError('is damaged: an entry name runs past its directory')
      // Names that are not flagged UTF-8 are in code page 437; latin1 reads its ASCII part alike.
      entry.name = directory.toString(flags & UTF8_NAMES ? 'utf8' : 'latin1', nameStart, nameStart + nameLength)
      entries.push(entry)
      offset = nameStart + nameLength + extraLength + commentLength
    }
    return { file, size, directoryOffset, entries }
  } finally {
    await handle.close()
  }
}

/**
 * The entry's bytes, as a stream. Throws ZipError for an entry this reader refuses, one whose data
 * lies outside the archive, or one that inflates to other bytes than its directory record says.
 */
export async function* readZipEntry(zip: ZipArchive, entry: ZipEntry): AsyncGenerator<Buffer> {
  if (entry.encrypted) throw new ZipError('is encrypted; export the roster without a password')
  if (entry.method !== STORED && entry.method !== DEFLATED)
    throw new ZipError('is compressed with a method other than deflate; export a plain .zip')
  const handle = await fs.promises.open(zip.file, 'r')
  let header: Buffer
  try {
    header = await readAt(handle, entry.localHeaderOffset, LOCAL_HEADER_BYTES)
  } finally {
    await handle.close()
  }
  if (header.readUInt32LE(0) !== LOCAL_HEADER)
    throw new ZipError('is damaged: an entry is not where its directory says')
  const start = entry.localHeaderOffset + LOCAL_HEADER_BYTES + header.readUInt16LE(26) + header.readUInt16LE(28)
  if (start + entry.compressedSize > zip.directoryOffset)
    throw new ZipError('is damaged: an entry runs into the archive directory')
  if (entry.method === STORED && entry.compressedSize !== entry.uncompressedSize)
    throw new ZipError('is damaged: a stored entry has two sizes')
  if (entry.compressedSize === 0) {
    if (entry.uncompressedSize !== 0) throw new ZipError('is damaged: an empty entry claims content')
    return
  }

  const raw = fs.createReadStream(zip.file, { start, end: start + entry.compressedSize - 1, highWaterMark: 1 << 16 })
  const bytes = entry.method === DEFLATED ? zlib.createInflateRaw() : null
  // pipeline passes a read error on to the inflater, whose iteration then throws it.
  if (bytes !== null) pipeline(raw, bytes, () => {})
  let size = 0
  let crc = 0
  try {
    for await (const chunk of (bytes ?? raw) as AsyncIterable<Buffer>) {
      size += chunk.length
      if (size > entry.uncompressedSize)
        throw new ZipError('is damaged or crafted: an entry inflates past the size its directory declares')
      crc = zlib.crc32(chunk, crc)
      yield chunk
    }
  } catch (error) {
    // zlib's own errors carry codes such as Z_DATA_ERROR; a read error is passed on as it is.
    const code = (error as { code?: unknown }).code
    if (typeof code === 'string' && code.startsWith('Z_'))
      throw new ZipError('is damaged: an entry is not valid deflate data')
    throw error
  } finally {
    raw.destroy()
    bytes?.destroy()
  }
  if (size !== entry.uncompressedSize || crc !== entry.crc32)
    throw new ZipError('is damaged: an entry does not match its checksum')
}
