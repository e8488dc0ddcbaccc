/**
 * Storage write failures with real faults, not mocks: the SQLite file on a filesystem that is
 * full (a small tmpfs, or SQLite's own page limit where mounting is impossible), a read-only
 * database file, and PostgreSQL's read-only transaction error. Every one answers 503
 * `storage_unavailable` with Retry-After, never 500, logs one line rather than one stack per
 * request, and the service recovers by itself once the fault is gone.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { Writable } from 'node:stream'
import { sql } from 'kysely'
import { pino } from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { isStorageUnavailable, type Storage } from '../../src/storage/connection.js'
import {
  bearer,
  createTestStorage,
  type Fixtures,
  type ListeningApp,
  listeningApp,
  seedFixtures,
  STUDENTS,
  tempDir,
  testConfig,
} from '../helper.js'

const SQLITE = process.env.TEST_DATABASE_URL === undefined

/** Mounting needs root and a kernel that allows it in this container; CI runs as root. */
function canMount(): boolean {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return false
  const probe = tempDir('curriculum-mount-probe-')
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe]).status === 0
  if (mounted) spawnSync('umount', [probe])
  fs.rmSync(probe, { recursive: true, force: true })
  return mounted
}

/** Log lines the app wrote, parsed. */
function capturedLogger(): { logger: pino.Logger; lines: () => Array<Record<string, unknown>> } {
  const chunks: string[] = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk))
      done()
    },
  })
  // warn: the access log (info) would drown what this test looks at.
  const logger = pino({ level: 'warn' }, stream)
  return {
    logger,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  }
}

interface Harness {
  server: ListeningApp
  storage: Storage
  fixtures: Fixtures
  logLines: () => Array<Record<string, unknown>>
}

async function serve(url: string): Promise<Harness> {
  const storage = await createTestStorage({ url })
  const fixtures = await seedFixtures(storage, Date.now())
  const { logger, lines } = capturedLogger()
  const server = await listeningApp({
    config: testConfig({ RATE_LIMIT: '100000', ORGANISATION_RATE_LIMIT: '100000' }),
    storage,
    logger,
  })
  return { server, storage, fixtures, logLines: lines }
}

/** 20 enrolls (a tier change and a disclosure row each) and 20 progress reads (a disclosure row each), all at once. */
function burst({ server, fixtures }: Harness, round: number) {
  const tier = round % 2 === 0 ? 'builder' : 'innovator'
  return Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      i % 2 === 0
        ? server.client.request({
            method: 'POST',
            url: `/api/v1/students/${STUDENTS.ada}/enroll`,
            headers: bearer(fixtures.keys.readWrite),
            payload: { tier },
          })
        : server.client.request({
            url: `/api/v1/students/${STUDENTS.ben}/progress`,
            headers: bearer(fixtures.keys.readWrite),
          }),
    ),
  )
}

function expectAllUnavailable(responses: Awaited<ReturnType<typeof burst>>): void {
  const statuses = responses.map((res) => res.statusCode)
  expect(statuses.filter((status) => status === 500)).toEqual([])
  expect(statuses).toEqual(Array(40).fill(503))
  for (const res of responses) {
    expect(res.json().code).toBe('storage_unavailable')
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0)
  }
}

async function disclosureCount(storage: Storage): Promise<number> {
  return Number(
    (
      await storage.db
        .selectFrom('disclosures')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  )
}

/** Storage warnings in the log: one line each, without a stack per request. */
function storageLogLines(harness: Harness): Array<Record<string, unknown>> {
  return harness.logLines().filter((line) => /storage/i.test(String(line.msg)))
}

/** A filesystem (or, failing that, a database) that can be filled up and freed again. */
interface FullDisk {
  url: string
  fill(storage: Storage): Promise<void>
  free(storage: Storage): Promise<void>
}

/** A small tmpfs, unmounted by the test's cleanup. */
function mountTmpfs(cleanups: Array<() => void>): string {
  const dir = tempDir('curriculum-fault-')
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', dir])
  cleanups.push(() => {
    spawnSync('umount', [dir])
    fs.rmSync(dir, { recursive: true, force: true })
  })
  return dir
}

/** A 4 MB tmpfs holding the database, filled with a file until the kernel answers ENOSPC. */
function tmpfsDisk(cleanups: Array<() => void>): FullDisk {
  const dir = mountTmpfs(cleanups)
  const filler = path.join(dir, 'filler')
  return {
    url: `sqlite:${path.join(dir, 'full.db')}`,
    async fill() {
      const fd = fs.openSync(filler, 'w')
      try {
        for (const size of [64 * 1024, 512]) {
          try {
            for (;;) fs.writeSync(fd, Buffer.alloc(size, 1))
          } catch (error) {
            expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC')
          }
        }
      } finally {
        fs.closeSync(fd)
      }
    },
    async free() {
      fs.rmSync(filler)
    },
  }
}

/**
 * Where mounting is impossible: SQLite's page limit on the app's connection, and the
 * disclosure table filled up to it, so that SQLite raises a real SQLITE_FULL on the next row.
 */
function pageLimitDisk(): FullDisk {
  console.warn('[storage-faults] cannot mount a tmpfs here: filling the database up to PRAGMA max_page_count instead')
  return {
    url: `sqlite:${path.join(tempDir(), 'full.db')}`,
    async fill(storage) {
      const pages = Number(
        (await sql<{ page_count: number }>`pragma page_count`.execute(storage.db)).rows[0]!.page_count,
      )
      expect(pages).toBeGreaterThan(0)
      await sql.raw(`pragma max_page_count = ${pages + 2}`).execute(storage.db)
      const row = {
        at: new Date().toISOString(),
        request_id: 'filler',
        key_id: 'filler',
        organisation_id: 'filler',
        student_id: STUDENTS.ben,
        action: 'progress.read' as const,
        outcome: 'disclosed' as const,
      }
      await expect(
        (async () => {
          // Bounded, so that a limit SQLite ignored fails the test instead of hanging it.
          for (let i = 0; i < 100_000; i++) await storage.db.insertInto('disclosures').values(row).execute()
        })(),
      ).rejects.toMatchObject({ code: 'SQLITE_FULL' })
    },
    async free(storage) {
      await sql.raw('pragma max_page_count = 1073741823').execute(storage.db)
    },
  }
}

describe.skipIf(!SQLITE)('SQLite write failures', () => {
  const cleanups: Array<() => Promise<void> | void> = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  })

  it('a full filesystem answers 503 with Retry-After to every write, logs one line, and recovers when space returns', async () => {
    const disk = canMount() ? tmpfsDisk(cleanups) : pageLimitDisk()
    const harness = await serve(disk.url)
    cleanups.push(async () => {
      await harness.server.close()
      await harness.storage.close()
    })

    const healthy = await burst(harness, 0)
    expect(healthy.map((res) => res.statusCode)).toEqual(Array(40).fill(200))

    // An empty WAL, so that the next commit must grow a file on the full filesystem.
    await sql`pragma wal_checkpoint(TRUNCATE)`.execute(harness.storage.db)
    await disk.fill(harness.storage)
    try {
      expectAllUnavailable(await burst(harness, 1))
      expectAllUnavailable(await burst(harness, 2))
    } finally {
      await disk.free(harness.storage)
    }
    const warnings = storageLogLines(harness)
    expect(warnings.length).toBeGreaterThanOrEqual(1)
    expect(warnings.length).toBeLessThanOrEqual(2)
    expect(String(warnings[0]!.msg)).toMatch(/SQLITE_FULL/)
    expect(JSON.stringify(warnings)).not.toMatch(/\\n\s+at /)

    // Space is back: the very next requests succeed, on the same connection and write queue.
    const stored = await disclosureCount(harness.storage)
    const recovered = await burst(harness, 3)
    expect(recovered.map((res) => res.statusCode)).toEqual(Array(40).fill(200))
    expect(await disclosureCount(harness.storage)).toBe(stored + 40)
  })
})

describe.skipIf(!SQLITE)('SQLite read-only storage', () => {
  const cleanups: Array<() => Promise<void> | void> = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  })

  it('a database that refuses writes (SQLITE_READONLY) answers 503 with Retry-After, and recovers once writable', async () => {
    // A tmpfs cannot be remounted read-only while the database is open for writing (EBUSY);
    // query_only makes SQLite itself refuse every write with SQLITE_READONLY, the same error.
    const harness = await serve(`sqlite:${path.join(tempDir(), 'ro.db')}`)
    cleanups.push(async () => {
      await harness.server.close()
      await harness.storage.close()
    })
    expect((await burst(harness, 0)).map((res) => res.statusCode)).toEqual(Array(40).fill(200))
    await sql`pragma query_only = 1`.execute(harness.storage.db)
    try {
      expectAllUnavailable(await burst(harness, 1))
    } finally {
      await sql`pragma query_only = 0`.execute(harness.storage.db)
    }
    const warnings = storageLogLines(harness)
    expect(warnings).toHaveLength(1)
    expect(String(warnings[0]!.msg)).toMatch(/SQLITE_READONLY/)
    expect((await burst(harness, 2)).map((res) => res.statusCode)).toEqual(Array(40).fill(200))
  })
})

describe.skipIf(SQLITE)('PostgreSQL write refusals', () => {
  it('a read-only transaction (25006) counts as storage unavailable', async () => {
    const storage = await createTestStorage({ catalog: false })
    try {
      const error = await storage.db
        .transaction()
        .setAccessMode('read only')
        .execute((trx) => trx.insertInto('settings').values({ name: 'read-only', value: 'x' }).execute())
        .catch((caught: unknown) => caught)
      expect((error as { code?: string }).code).toBe('25006')
      expect(isStorageUnavailable(error)).toBe(true)
    } finally {
      await storage.close()
    }
  })
})
