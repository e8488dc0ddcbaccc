import { sql } from 'kysely'
import { ConfigError, loadConfig } from '../../src/config.js'
import { beforeAll, describe, expect, it } from 'vitest'
import { enrollStudent } from '../../src/cases/enroll.js'
import { readStudentProgress } from '../../src/cases/progress-read.js'
import { linkStudents, upsertProgress, upsertStudents } from '../../src/storage/student-import-repository.js'
import { createTestStorage, type Fixtures, START, STUDENTS, seedFixtures, sqliteOf } from '../helper.js'
import { perSuite } from '../support/built.js'

describe('progress reads', () => {
  const storage = perSuite(() => createTestStorage())
  let fixtures: Fixtures
  beforeAll(async () => {
    fixtures = await seedFixtures(storage, START)
  })

  const access = () => ({
    at: START,
    requestId: `req-${Math.random()}`,
    keyId: fixtures.keyIds.read,
    organisationId: fixtures.orgs.acme,
    sandbox: false,
  })
  const read = () => readStudentProgress(storage.db, storage.writes, STUDENTS.ada, access(), storage.reader)

  it('answer what is committed, never a write in flight (on a SQLite file, a read while the writer holds a transaction goes to the read-only connection)', async () => {
    expect(storage.reader !== undefined).toBe(storage.engine === 'sqlite')
    const before = (await read())!
    let release!: () => void
    const latch = new Promise<void>((resolve) => (release = resolve))
    let updated!: () => void
    const written = new Promise<void>((resolve) => (updated = resolve))
    const failing = storage.writes.transaction(async (trx) => {
      await sql`update students set tier = 'pioneer' where id = ${STUDENTS.ada}`.execute(trx)
      updated()
      await latch
      throw new Error('undone')
    })
    await written
    // On SQLite the old path would wait for the open transaction, then its disclosure with it.
    const during = read()
    release()
    await expect(failing).rejects.toThrow('undone')
    expect((await during)!.tier).toBe(before.tier)
    expect((await read())!.tier).toBe(before.tier)
  })

  it('read the same on the synchronous path as through the query builder, escapes and nulls included', async () => {
    const id = '55555555-5555-4555-8555-555555555555'
    await upsertStudents(storage.db, [{ id, firstName: 'Zoë "Z" \\ O\'Neil\u2028', tier: 'builder' }], START)
    await linkStudents(storage.db, [{ studentId: id, organisationId: fixtures.orgs.acme }], START)
    const at = (minutes: number) => new Date(START + minutes * 60_000).toISOString()
    await upsertProgress(
      storage.db,
      [
        {
          studentId: id,
          lessonSlug: 'builder/b1-x',
          status: 'completed',
          xp: 2 ** 31 - 1,
          timeSeconds: 0,
          startedAt: at(1),
          completedAt: at(2),
        },
        {
          studentId: id,
          lessonSlug: 'explorer/e9-gone',
          status: 'in_progress',
          xp: 0,
          timeSeconds: 59,
          startedAt: at(3),
          completedAt: null,
        },
      ],
      START,
    )
    const context = { ...access(), organisationId: fixtures.orgs.acme }
    const sync = await readStudentProgress(storage.db, storage.writes, id, context, storage.reader)
    const built = await readStudentProgress(storage.db, storage.writes, id, context)
    expect(sync).toEqual(built)
    expect(sync!.firstName).toBe('Zoë "Z" \\ O\'Neil\u2028')
    expect(sync!.entries.map((entry) => [entry.xp, entry.completedAt])).toEqual(
      expect.arrayContaining([
        [2 ** 31 - 1, at(2)],
        [0, null],
      ]),
    )
    // A student without progress, and one the organisation cannot see.
    expect(
      (await readStudentProgress(storage.db, storage.writes, STUDENTS.dev, context, storage.reader))!.entries,
    ).toEqual([])
    expect(
      await readStudentProgress(storage.db, storage.writes, STUDENTS.cleo, context, storage.reader),
    ).toBeUndefined()
  })

  it('answer an acknowledged enroll at once (read-your-writes)', async () => {
    const target = (await read())!.tier === 'builder' ? 'explorer' : 'builder'
    const enrolled = await enrollStudent(storage.writes, STUDENTS.ada, target, access(), START + 1000)
    expect(enrolled?.tier).toBe(target)
    expect((await read())!.tier).toBe(target)
  })
})

describe('memory-mapped reads', () => {
  it("are configured by SQLITE_MMAP_MIB: 1024 by default, 0 (off) to 2047, SQLite's ceiling", () => {
    expect(loadConfig({}).sqliteMmapMib).toBe(1024)
    expect(loadConfig({ SQLITE_MMAP_MIB: '0' }).sqliteMmapMib).toBe(0)
    expect(loadConfig({ SQLITE_MMAP_MIB: '2047' }).sqliteMmapMib).toBe(2047)
    expect(() => loadConfig({ SQLITE_MMAP_MIB: '4096' })).toThrow(ConfigError)
  })

  it('map the file on the writing connection, which serves progress reads while it has no transaction open; keys are looked up unmapped', async () => {
    const mapped = await createTestStorage({ mmapBytes: 64 * 1024 * 1024 })
    try {
      if (mapped.engine !== 'sqlite' || mapped.reader === undefined) return
      const fixtures = await seedFixtures(mapped, START)
      const connection = sqliteOf(mapped).readConnection!
      expect(connection.readonly).toBe(false)
      expect(connection.pragma('mmap_size', { simple: true })).toBe(64 * 1024 * 1024)
      // Key lookups read through the read-only connection's page cache.
      const lookups = await sql<{ mmap_size: number }>`pragma mmap_size`.execute(mapped.keyLookups)
      expect(lookups.rows[0]?.mmap_size).toBe(0)
      const context = {
        at: START,
        requestId: 'req-mmap',
        keyId: fixtures.keyIds.read,
        organisationId: fixtures.orgs.acme,
        sandbox: false,
      }
      const read = await readStudentProgress(mapped.db, mapped.writes, STUDENTS.ada, context, mapped.reader)
      expect(read?.entries.length).toBeGreaterThan(0)
    } finally {
      await mapped.close()
    }
  })
})
