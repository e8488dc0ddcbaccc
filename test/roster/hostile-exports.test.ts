/**
 * Exports a district did not mean to send, or someone crafted: wrong encodings, rows that never
 * end, files over the limits, and .zip archives that are damaged, encrypted, of a kind this
 * reader refuses, or built to expand without bound.
 */
import fs from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import { formatImportProblem, type OneRosterLimits, readOneRoster } from '../../src/roster/oneroster.js'
import {
  type Files,
  manifest,
  ORGS_HEADER,
  removeTempDirs,
  table,
  USERS_11_HEADER,
  writeFolder,
  writeZip,
  type ZipItem,
} from './roster-export.js'

afterAll(removeTempDirs)

const student = (sourcedId: string, givenName = 'Ada') => ({
  sourcedId,
  role: 'student',
  orgSourcedIds: 'sch-1',
  givenName,
  familyName: 'Family',
})

function export11(users: string | Buffer): Files {
  return {
    'manifest.csv': manifest('1.1', { orgs: 'bulk', users: 'bulk' }),
    'orgs.csv': table(ORGS_HEADER, [{ sourcedId: 'sch-1', name: 'School One', type: 'school' }]),
    'users.csv': users,
  }
}

const USERS = table(USERS_11_HEADER, [student('s1'), student('s2'), student('s3')])

async function problems(source: string, limits?: Partial<OneRosterLimits>): Promise<string[]> {
  const result = await readOneRoster(source, limits)
  if (result.ok) throw new Error('expected problems, got an export')
  return result.problems.map(formatImportProblem)
}

function items(files: Files, change: Partial<Record<string, Partial<ZipItem>>> = {}): ZipItem[] {
  return Object.entries(files).map(([name, data]) => ({ name, data, ...change[name] }))
}

describe('encodings', () => {
  it('refuses UTF-16 text, with or without a byte order mark', async () => {
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(USERS, 'utf16le')])
    expect(await problems(writeFolder(export11(utf16)))).toEqual([
      'users.csv: is UTF-16 text; OneRoster files are UTF-8: export or save it as UTF-8',
    ])
    const bigEndian = Buffer.from(USERS, 'utf16le').swap16()
    expect(await problems(writeFolder(export11(Buffer.concat([Buffer.from([0xfe, 0xff]), bigEndian]))))).toEqual([
      'users.csv: is UTF-16 text; OneRoster files are UTF-8: export or save it as UTF-8',
    ])
    expect(await problems(writeFolder(export11(Buffer.from(USERS, 'utf16le'))))).toEqual([
      'users.csv:1: holds NUL characters, as UTF-16 text without a byte order mark does: export or save it as UTF-8',
    ])
  })

  it('refuses text that is not UTF-8 and names the row where it stops being UTF-8', async () => {
    // "Zoë" saved as Latin-1 by a spreadsheet: a lone 0xEB byte.
    const latin1 = Buffer.from(table(USERS_11_HEADER, [student('s1'), student('s2'), student('s3', 'Zoë')]), 'latin1')
    expect(await problems(writeFolder(export11(latin1)))).toEqual([
      'users.csv:4: is not valid UTF-8 text from this line on: export or save it as UTF-8',
    ])
    expect(await problems(writeZip(export11(latin1)))).toEqual([
      'users.csv:4: is not valid UTF-8 text from this line on: export or save it as UTF-8',
    ])
  })

  it('refuses a file that ends inside a UTF-8 character', async () => {
    const cut = Buffer.from(`${USERS.trimEnd()}é`, 'utf8').subarray(0, -1)
    expect(await problems(writeFolder(export11(cut)))).toEqual([
      'users.csv:4: is not valid UTF-8 text from this line on: export or save it as UTF-8',
    ])
  })
})

describe('sizes', () => {
  it('stops at a row that runs on without end, holding no more than a bounded part of it', async () => {
    const open = `${USERS}s4,,,true,sch-1,student,,,"Ada${'x'.repeat(3 * 1024 * 1024)}`
    expect(await problems(writeFolder(export11(open)))).toEqual([
      'users.csv:5: a row runs past 1,048,576 characters without ending: is a quote left open?',
    ])
  })

  it('refuses files over the byte limit, in a folder or an archive', async () => {
    const files = export11(
      table(
        USERS_11_HEADER,
        Array.from({ length: 20 }, (_, i) => student(`s${i}`)),
      ),
    )
    const limit = Math.max(...Object.values(files).map((content) => content.length)) - 1
    expect(files['users.csv']!.length).toBe(limit + 1)
    const message = `users.csv: is larger than ${limit.toLocaleString('en-US')} bytes, the most a roster file may hold`
    expect(await problems(writeFolder(files), { maxFileBytes: limit })).toEqual([message])
    expect(await problems(writeZip(files), { maxFileBytes: limit })).toEqual([message])
  })

  it('stops at the row limit and at the student limit', async () => {
    expect(await problems(writeFolder(export11(USERS)), { maxRows: 2 })).toEqual([
      'users.csv:4: holds more than 2 rows, the most a roster file may hold',
    ])
    expect(await problems(writeFolder(export11(USERS)), { maxStudents: 2 })).toEqual([
      'users.csv:4: brings more than 2 students, the most one import reads',
    ])
  })
})

describe('.zip archives', () => {
  const files = export11(USERS)

  it('refuses an entry that expands far more than roster data does (a zip bomb)', async () => {
    const bomb = Buffer.alloc(8 * 1024 * 1024, ','.charCodeAt(0))
    expect(await problems(writeZip(export11(bomb)))).toEqual([
      'users.csv: is compressed more than 200 to 1, far more than roster data is: refused as a possible zip bomb',
    ])
  })

  it('stops an entry that inflates past the size its directory declares', async () => {
    const lying = items(files, { 'users.csv': { uncompressedSize: 100 } })
    expect(await problems(writeZip(lying))).toEqual([
      'users.csv: is damaged or crafted: an entry inflates past the size its directory declares',
    ])
  })

  it('refuses an entry whose checksum does not match, or whose data is not deflate', async () => {
    expect(await problems(writeZip(items(files, { 'users.csv': { crc32: 1 } })))).toEqual([
      'users.csv: is damaged: an entry does not match its checksum',
    ])
    const garbage = items(files, { 'users.csv': { body: Buffer.from([0xff, 0xff, 0xff, 0xff]) } })
    expect(await problems(writeZip(garbage))).toEqual(['users.csv: is damaged: an entry is not valid deflate data'])
  })

  it('refuses encrypted entries, other compression methods and entries given twice', async () => {
    expect(await problems(writeZip(items(files, { 'users.csv': { flags: 1 } })))).toEqual([
      'users.csv: is encrypted; export the roster without a password',
    ])
    expect(await problems(writeZip(items(files, { 'users.csv': { method: 12 } })))).toEqual([
      'users.csv: is compressed with a method other than deflate; export a plain .zip',
    ])
    expect(await problems(writeZip([...items(files), { name: 'users.csv', data: USERS }]))).toEqual([
      'users.csv: appears twice in the archive',
    ])
  })

  it('refuses ZIP64 archives and archives spanning disks', async () => {
    expect(await problems(writeZip(items(files), { zip64Locator: true }))).toEqual([
      'roster.zip: is a ZIP64 archive, which is not read; export the roster as a plain .zip',
    ])
    expect(await problems(writeZip(items(files), { disk: 1 }))).toEqual([
      'roster.zip: spans several disks; export it as one .zip file',
    ])
  })

  it('refuses a cut archive', async () => {
    const file = writeZip(files)
    fs.truncateSync(file, fs.statSync(file).size - 10)
    expect(await problems(file)).toEqual(['roster.zip: is not a .zip archive (no end of central directory)'])
  })

  it('reads only top-level names: an entry named with a path is never taken for a roster file', async () => {
    const traversal = [
      ...items(files).filter((item) => item.name !== 'users.csv'),
      { name: '../users.csv', data: USERS },
      { name: '/users.csv', data: USERS },
    ]
    expect(await problems(writeZip(traversal))).toEqual([
      'users.csv: is inside a folder of the archive, not at its top level: zip the files themselves, not their folder',
    ])
  })

  it('reads an entry that inflates in many chunks', async () => {
    const many = table(
      USERS_11_HEADER,
      Array.from({ length: 20_000 }, (_, i) => student(`s${i}`)),
    )
    const result = await readOneRoster(writeZip(export11(many)))
    expect(result.ok && result.students.length).toBe(20_000)
  })
})
