/**
 * Writes OneRoster exports for the tests: CSV text with the specification's headers, folders of
 * files, and .zip archives built by hand (stored or deflated entries, and the damaged and
 * hostile archives a careful reader must refuse).
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import zlib from 'node:zlib'

/** orgs.csv, 1.1 and 1.2 alike. */
export const ORGS_HEADER = ['sourcedId', 'status', 'dateLastModified', 'name', 'type', 'identifier', 'parentSourcedId']

export const USERS_11_HEADER = [
  'sourcedId',
  'status',
  'dateLastModified',
  'enabledUser',
  'orgSourcedIds',
  'role',
  'username',
  'userIds',
  'givenName',
  'familyName',
  'middleName',
  'identifier',
  'email',
  'sms',
  'phone',
  'agentSourcedIds',
  'grades',
  'password',
]

export const USERS_12_HEADER = [
  'sourcedId',
  'status',
  'dateLastModified',
  'enabledUser',
  'username',
  'userIds',
  'givenName',
  'familyName',
  'middleName',
  'identifier',
  'email',
  'sms',
  'phone',
  'agentSourcedIds',
  'grades',
  'password',
  'userMasterIdentifier',
  'resourceSourcedIds',
  'preferredGivenName',
  'preferredMiddleName',
  'preferredFamilyName',
  'primaryOrgSourcedId',
  'pronouns',
]

export const ROLES_HEADER = [
  'sourcedId',
  'status',
  'dateLastModified',
  'userSourcedId',
  'roleType',
  'role',
  'beginDate',
  'endDate',
  'orgSourcedId',
  'userProfileSourcedId',
]

export const ENROLLMENTS_11_HEADER = [
  'sourcedId',
  'status',
  'dateLastModified',
  'classSourcedId',
  'schoolSourcedId',
  'userSourcedId',
  'role',
  'primary',
  'beginDate',
  'endDate',
]

const FILES_11 = [
  'academicSessions',
  'categories',
  'classes',
  'classResources',
  'courses',
  'courseResources',
  'demographics',
  'enrollments',
  'lineItems',
  'orgs',
  'resources',
  'results',
  'users',
]

const FILES_12 = [
  'academicSessions',
  'categories',
  'classes',
  'classResources',
  'courses',
  'courseResources',
  'demographics',
  'enrollments',
  'lineItemLearningObjectiveIds',
  'lineItems',
  'lineItemScoreScales',
  'orgs',
  'resources',
  'resultLearningObjectiveIds',
  'results',
  'resultScoreScales',
  'roles',
  'scoreScales',
  'userProfiles',
  'userResources',
  'users',
]

/** A manifest as the specification lays it out: every file of the version, absent unless given. */
export function manifest(version: '1.1' | '1.2', modes: Record<string, string>): string {
  const files = version === '1.1' ? FILES_11 : FILES_12
  const rows = [
    ['manifest.version', '1.0'],
    ['oneroster.version', version],
    ...files.map((name) => [`file.${name}`, modes[name] ?? 'absent']),
    ['source.systemName', 'District SIS'],
    ['source.systemCode', 'SIS-1'],
  ]
  return csv(['propertyName', 'value'], rows)
}

function quote(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value
}

/** CSV text with CRLF line breaks, as RFC 4180 writes them. */
export function csv(header: readonly string[], rows: readonly (readonly string[])[]): string {
  return `${[header, ...rows].map((row) => row.map(quote).join(',')).join('\r\n')}\r\n`
}

/** CSV text from rows given by column name; columns a row does not name are blank. */
export function table(
  header: readonly string[],
  rows: readonly Readonly<Record<string, string | undefined>>[],
): string {
  return csv(
    header,
    rows.map((row) => header.map((column) => row[column] ?? '')),
  )
}

/**
 * Writes rows given by column name to `folder/name` a megabyte at a time, unquoted: for exports
 * too large to build as one string.
 */
export function writeLargeTable(
  folder: string,
  name: string,
  header: readonly string[],
  rows: Iterable<Record<string, string>>,
): void {
  const fd = fs.openSync(path.join(folder, name), 'w')
  let text = `${header.join(',')}\r\n`
  for (const row of rows) {
    text += `${header.map((column) => row[column] ?? '').join(',')}\r\n`
    if (text.length > 1 << 20) {
      fs.writeSync(fd, text)
      text = ''
    }
  }
  fs.writeSync(fd, text)
  fs.closeSync(fd)
}

export type Files = Record<string, string | Buffer>

const made: string[] = []

export function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oneroster-'))
  made.push(dir)
  return dir
}

/** Removes every folder tempDir made; for afterAll. */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
}

export function writeFolder(files: Files, folder = tempDir()): string {
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(folder, name), content)
  return folder
}

export interface ZipItem {
  name: string
  data: string | Buffer
  method?: 'stored' | 'deflate' | number
  /** General purpose flags in both headers (bit 0: encrypted). */
  flags?: number
  /** The entry's bytes as written, instead of the data compressed by `method`. */
  body?: Buffer
  /** Overrides of what the central directory declares. */
  uncompressedSize?: number
  crc32?: number
}

export interface ZipShape {
  /** Disk number written in the end record. */
  disk?: number
  /** A ZIP64 end-of-directory locator before the end record. */
  zip64Locator?: boolean
}

/** A .zip archive of the items, deflated unless told otherwise. */
export function zipBytes(items: readonly ZipItem[], shape: ZipShape = {}): Buffer {
  const locals: Buffer[] = []
  const directory: Buffer[] = []
  let offset = 0
  for (const item of items) {
    const data = Buffer.isBuffer(item.data) ? item.data : Buffer.from(item.data, 'utf8')
    const method =
      item.method === 'stored' ? 0 : item.method === undefined || item.method === 'deflate' ? 8 : item.method
    const body = item.body ?? (method === 8 ? zlib.deflateRawSync(data) : data)
    const name = Buffer.from(item.name, 'utf8')
    const crc = item.crc32 ?? zlib.crc32(data)
    const size = item.uncompressedSize ?? data.length
    const flags = (item.flags ?? 0) | 0x800
    const local = Buffer.alloc(30)
    local.writeUInt32LE(0x04034b50, 0)
    local.writeUInt16LE(20, 4)
    local.writeUInt16LE(flags, 6)
    local.writeUInt16LE(method, 8)
    local.writeUInt32LE(crc, 14)
    local.writeUInt32LE(body.length, 18)
    local.writeUInt32LE(size, 22)
    local.writeUInt16LE(name.length, 26)
    const central = Buffer.alloc(46)
    central.writeUInt32LE(0x02014b50, 0)
    central.writeUInt16LE(20, 4)
    central.writeUInt16LE(20, 6)
    central.writeUInt16LE(flags, 8)
    central.writeUInt16LE(method, 10)
    central.writeUInt32LE(crc, 16)
    central.writeUInt32LE(body.length, 20)
    central.writeUInt32LE(size, 24)
    central.writeUInt16LE(name.length, 28)
    central.writeUInt32LE(offset, 42)
    locals.push(local, name, body)
    directory.push(central, name)
    offset += local.length + name.length + body.length
  }
  const directoryBytes = Buffer.concat(directory)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(shape.disk ?? 0, 4)
  end.writeUInt16LE(items.length, 8)
  end.writeUInt16LE(items.length, 10)
  end.writeUInt32LE(directoryBytes.length, 12)
  end.writeUInt32LE(offset, 16)
  const locator = Buffer.alloc(shape.zip64Locator ? 20 : 0)
  if (shape.zip64Locator) locator.writeUInt32LE(0x07064b50, 0)
  return Buffer.concat([...locals, directoryBytes, locator, end])
}

export function writeZip(files: Files | readonly ZipItem[], shape: ZipShape = {}): string {
  const items = Array.isArray(files)
    ? (files as readonly ZipItem[])
    : Object.entries(files as Files).map(([name, data]) => ({ name, data }))
  const file = path.join(tempDir(), 'roster.zip')
  fs.writeFileSync(file, zipBytes(items, shape))
  return file
}
