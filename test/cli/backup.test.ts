/**
 * `curriculum backup`, `backup --verify` and `restore` on SQLite files, as an operator runs them:
 * the backup is a checked, private (0600) file that never replaces another without --force; a
 * file that is not a sound backup of a schema this version knows, or holds a table, index, trigger
 * or view its migrations do not make, is refused, and the database is left as it was; a restore refuses a database a running server has open, writes its audit row
 * into the restored database, names the students it brought back after their erasure, and, killed
 * at any moment, leaves the old database or the whole restored one.
 */
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import SQLite from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { verifyCertificate } from '../../src/domain/deletion-certificate.js'
import type { PublicJwk } from '../../src/domain/signing-key.js'
import { createApiKey, createOrganisation } from '../../src/storage/access-repository.js'
import { endAgreements } from '../../src/cases/agreement-end.js'
import { recordAgreement } from '../../src/cases/agreement-record.js'
import { disposeDueAgreements } from '../../src/cases/agreement-disposition.js'
import { linkStudents, upsertStudents } from '../../src/storage/student-import-repository.js'
import { readChangeFeed } from '../../src/cases/change-feed-read.js'
import { startServer } from '../server/process.js'
import { CLI, cli, jsonOf, ROOT, tempDir, useCliHarness, withStorage } from './cli-harness.js'

useCliHarness()

const ADA = '11111111-1111-4111-8111-111111111111'
const BEN = '22222222-2222-4222-8222-222222222222'
const CLEO = '33333333-3333-4333-8333-333333333333'

/** A database with an organisation and two linked students (Ada, Ben), in a folder of its own. */
async function seededDatabase(): Promise<{ dir: string; file: string; databaseUrl: string }> {
  const dir = tempDir()
  const file = path.join(dir, 'curriculum.db')
  const databaseUrl = `sqlite:${file}`
  await withStorage(databaseUrl, async ({ db }) => {
    const acme = await createOrganisation(db, 'Acme Learning', Date.now())
    await upsertStudents(
      db,
      [
        { id: ADA, firstName: 'Ada', tier: 'explorer' },
        { id: BEN, firstName: 'Ben', tier: 'builder' },
      ],
      Date.now(),
    )
    await linkStudents(
      db,
      [ADA, BEN].map((studentId) => ({ studentId, organisationId: acme.id })),
      Date.now(),
    )
  })
  return { dir, file, databaseUrl }
}

/** Reads a database file directly, read-only. */
function readDatabase<T>(file: string, read: (database: SQLite.Database) => T): T {
  const database = new SQLite(file, { readonly: true, fileMustExist: true })
  try {
    return read(database)
  } finally {
    database.close()
  }
}

interface AuditLine {
  action: string
  detail: { changed: Record<string, unknown> }
}

function auditLog(file: string): AuditLine[] {
  return readDatabase(file, (database) =>
    (
      database.prepare('select action, detail from audit_log order by id').all() as { action: string; detail: string }[]
    ).map((row) => ({ action: row.action, detail: JSON.parse(row.detail) })),
  )
}

function students(file: string): string[] {
  return readDatabase(file, (database) =>
    (database.prepare('select id from students order by id').all() as { id: string }[]).map((row) => row.id),
  )
}

function digest(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex')
}

const mode = (file: string) => fs.statSync(file).mode & 0o777

describe('curriculum backup', () => {
  it('writes a checked copy with mode 0600, readable on its own, and an audit row in the database and the copy', async () => {
    const { dir, file, databaseUrl } = await seededDatabase()
    const copy = path.join(dir, 'backup.db')
    const result = await cli(['backup', copy, '--json'], { databaseUrl })
    expect(result.status, result.stderr).toBe(0)
    const document = jsonOf(result)
    expect(document).toMatchObject({
      ok: true,
      file: copy,
      integrity: 'ok',
      schema: { pending: [], unknown: [] },
      counts: { organisations: 1, students: 2, student_organisations: 2 },
    })
    expect(mode(copy)).toBe(0o600)
    // One file, nothing half-written beside it.
    expect(fs.readdirSync(dir).filter((name) => name.includes('backup'))).toEqual(['backup.db'])

    const verified = jsonOf(await cli(['backup', '--verify', copy, '--json'], { databaseUrl }))
    expect(verified).toMatchObject({ ok: true, integrity: 'ok', counts: document.counts, schema: { differences: [] } })
    expect(fs.readdirSync(dir).filter((name) => name.includes('backup'))).toEqual(['backup.db'])

    const [inDatabase] = auditLog(file).filter((row) => row.action === 'database.backup')
    expect(inDatabase?.detail.changed).toEqual({ file: copy })
    expect(auditLog(copy).at(-1)).toEqual(inDatabase)
  })

  it('never replaces an existing file unless --force, and writes no audit row when it refuses', async () => {
    const { dir, file, databaseUrl } = await seededDatabase()
    const existing = path.join(dir, 'taken.db')
    fs.writeFileSync(existing, 'an operator file')
    const refused = await cli(['backup', existing], { databaseUrl })
    expect(refused.status).toBe(1)
    expect(refused.stderr).toContain(`${existing} exists; give another file, or --force to replace it`)
    expect(fs.readFileSync(existing, 'utf8')).toBe('an operator file')
    expect(auditLog(file).filter((row) => row.action === 'database.backup')).toEqual([])

    const forced = await cli(['backup', existing, '--force', '--json'], { databaseUrl })
    expect(forced.status, forced.stderr).toBe(0)
    expect(jsonOf(forced).counts.students).toBe(2)
    expect(mode(existing)).toBe(0o600)
  })

  it('says what is wrong when there is nothing to back up or nowhere to put it', async () => {
    const dir = tempDir()
    const missing = await cli(['backup', path.join(dir, 'b.db')], {
      databaseUrl: `sqlite:${path.join(dir, 'none.db')}`,
    })
    expect(missing.status).toBe(1)
    expect(missing.stderr).toContain('there is no database at')
    const { file, databaseUrl } = await seededDatabase()
    const before = digest(file)
    const itself = await cli(['backup', file, '--force'], { databaseUrl })
    expect(itself.status).toBe(1)
    expect(itself.stderr).toContain('is the database itself')
    expect(digest(file)).toBe(before)
    const nowhere = await cli(['backup', path.join(dir, 'no/such/folder/b.db')], { databaseUrl })
    expect(nowhere.status).toBe(1)
    expect(nowhere.stderr).toContain('does not exist; nothing was written')
    expect(fs.readdirSync(dir)).toEqual([])
  })
})

/** Files that are no backup this version can restore, each with what the refusal says. */
async function hostileFiles(dir: string, backup: string): Promise<[string, string, RegExp][]> {
  const bytes = fs.readFileSync(backup)
  const write = (name: string, content: Buffer | string) => {
    fs.writeFileSync(path.join(dir, name), content)
    return path.join(dir, name)
  }
  const newer = write('newer.db', bytes)
  const database = new SQLite(newer)
  database
    .prepare('insert into kysely_migration (name, timestamp) values (?, ?)')
    .run('0900-from-a-newer-version', new Date().toISOString())
  database.close()
  // Garbage over every page after the first two: the schema is readable, the tables are not.
  const damaged = Buffer.from(bytes)
  damaged.fill(0x5a, 8192)
  return [
    ['not a database', write('notes.txt', 'first names and tiers\n'), /is not a SQLite database/],
    ['an empty file', write('empty.db', ''), /is empty/],
    ['a truncated copy', write('truncated.db', bytes.subarray(0, Math.floor(bytes.length / 2))), /is truncated/],
    ['a damaged copy', write('damaged.db', damaged), /is damaged|failed its integrity check/],
    ['a copy from a newer schema', newer, /was made by a newer version of the Curriculum API/],
    ['a file that is not there', path.join(dir, 'absent.db'), /cannot read/],
  ]
}

describe('backup --verify and restore of files that are no sound backup', () => {
  it('refuses each with its reason, and leaves the database exactly as it was', async () => {
    const { dir, file, databaseUrl } = await seededDatabase()
    const backup = path.join(dir, 'backup.db')
    expect((await cli(['backup', backup], { databaseUrl })).status).toBe(0)
    const before = digest(file)
    for (const [what, hostile, reason] of await hostileFiles(tempDir(), backup)) {
      const verified = await cli(['backup', '--verify', hostile], { databaseUrl })
      expect(verified.status, what).toBe(1)
      expect(verified.stderr, what).toMatch(reason)
      const restored = await cli(['restore', hostile, '--json'], { databaseUrl })
      expect(restored.status, what).toBe(1)
      const { error } = jsonOf(restored)
      expect(error.message, what).toMatch(reason)
      expect(error.message, what).toContain('nothing was changed')
      expect(digest(file), what).toBe(before)
      expect(fs.readdirSync(dir).sort(), what).toEqual(['backup.db', 'curriculum.db'])
    }
  })
})

/** Schema objects a backup could be given after it was taken, each with how the refusal names it. */
const PLANTED: [string, string, string][] = [
  [
    'a trigger that deletes every disclosure row as it is written',
    'create trigger forget after insert on disclosures begin delete from disclosures where id = new.id; end',
    'extra trigger forget (on disclosures)',
  ],
  ['a view of first names', 'create view names as select id, first_name from students', 'extra view names'],
  [
    'an index',
    'create index students_first_name on students (first_name)',
    'extra index students_first_name (on students)',
  ],
  ['a column added to a table', 'alter table students add column notes text', 'changed table students'],
]

describe('backup --verify and restore of a backup with schema objects the migrations do not make', () => {
  it('refuse each, naming the object, and leave the database exactly as it was', async () => {
    const { dir, file, databaseUrl } = await seededDatabase()
    const backup = path.join(dir, 'backup.db')
    expect((await cli(['backup', backup], { databaseUrl })).status).toBe(0)
    const before = digest(file)
    for (const [what, statement, named] of PLANTED) {
      const planted = path.join(tempDir(), 'planted.db')
      fs.copyFileSync(backup, planted)
      const database = new SQLite(planted)
      database.exec(statement)
      database.close()

      // backup --verify and restore read a file with one inspection: once is proof enough that verify names it.
      if (what === PLANTED[0]![0]) {
        const verified = await cli(['backup', '--verify', planted, '--json'], { databaseUrl })
        expect(verified.status, what).toBe(1)
        const { error } = jsonOf(verified)
        expect(error.message, what).toContain(`${planted} holds a schema the migrations do not make (${named})`)
        expect(error.schema.differences, what).toHaveLength(1)
        const text = await cli(['backup', '--verify', planted], { databaseUrl })
        expect(text.stderr, what).toContain(`schema objects: 1 differ from what those migrations make: ${named}`)
      }

      const restored = await cli(['restore', planted, '--json'], { databaseUrl })
      expect(restored.status, what).toBe(1)
      const refused = jsonOf(restored).error.message
      expect(refused, what).toContain(`(${named})`)
      expect(refused, what).toMatch(/restore another backup; nothing was changed$/)
      expect(digest(file), what).toBe(before)
      expect(fs.readdirSync(dir).sort(), what).toEqual(['backup.db', 'curriculum.db'])
    }
    // The backup as it was taken still verifies and restores; so does one with SQLite's planner statistics.
    expect((await cli(['backup', '--verify', backup], { databaseUrl })).stdout).toContain(
      'schema objects: exactly what those migrations make',
    )
    const analyzed = path.join(tempDir(), 'analyzed.db')
    fs.copyFileSync(backup, analyzed)
    const statistics = new SQLite(analyzed)
    statistics.exec('analyze')
    statistics.close()
    const verified = await cli(['backup', '--verify', analyzed], { databaseUrl })
    expect(verified.status, verified.stderr).toBe(0)
    const restored = await cli(['restore', backup], { databaseUrl })
    expect(restored.status, restored.stderr).toBe(0)
  })

  it('names every object that differs, a missing one too', async () => {
    const { dir, databaseUrl } = await seededDatabase()
    const backup = path.join(dir, 'backup.db')
    expect((await cli(['backup', backup], { databaseUrl })).status).toBe(0)
    const database = new SQLite(backup)
    database.exec(`${PLANTED.map(([, statement]) => statement).join(';\n')}; drop index audit_log_at`)
    database.close()
    const { error } = jsonOf(await cli(['backup', '--verify', backup, '--json'], { databaseUrl }))
    for (const [, , named] of PLANTED) expect(error.message).toContain(named)
    expect(error.message).toContain('missing index audit_log_at (on audit_log)')
    expect(error.schema.differences).toHaveLength(PLANTED.length + 1)
  })

  it('checks the copy it restores, not only the file it inspected', async () => {
    const { dir, file, databaseUrl } = await seededDatabase()
    const backup = path.join(dir, 'backup.db')
    expect((await cli(['backup', backup], { databaseUrl })).status).toBe(0)
    const database = new SQLite(backup)
    database.exec(PLANTED[0]![1])
    database.close()
    const before = digest(file)
    const { restoreDatabaseFile, DatabaseFileError } = await import('../../src/storage/sqlite/database-files.js')
    let audited = false
    const restoring = restoreDatabaseFile(backup, file, {
      force: false,
      audit: async () => {
        audited = true
      },
    })
    await expect(restoring).rejects.toThrow(DatabaseFileError)
    await expect(restoring).rejects.toThrow(/extra trigger forget \(on disclosures\).*nothing was changed/)
    expect(audited).toBe(false)
    expect(digest(file)).toBe(before)
    expect(fs.readdirSync(dir).sort()).toEqual(['backup.db', 'curriculum.db'])
  })
})

describe('curriculum restore', () => {
  it('replaces the database with the backup, readable by its owner alone, and records the restore in it', async () => {
    const { dir, file, databaseUrl } = await seededDatabase()
    const backup = path.join(dir, 'backup.db')
    expect((await cli(['backup', backup], { databaseUrl })).status).toBe(0)
    await withStorage(databaseUrl, ({ db }) =>
      upsertStudents(db, [{ id: CLEO, firstName: 'Cleo', tier: 'explorer' }], Date.now()),
    )
    // A database someone made readable by a group: the restored one is not.
    fs.chmodSync(file, 0o640)

    const result = await cli(['restore', backup, '--json'], { databaseUrl })
    expect(result.status, result.stdout + result.stderr).toBe(0)
    expect(jsonOf(result)).toMatchObject({ ok: true, database: file, from: backup, replaced: true, forced: false })
    expect(students(file)).toEqual([ADA, BEN])
    expect(mode(file)).toBe(0o600)
    const log = auditLog(file)
    expect(log.map((row) => row.action).slice(-2)).toEqual(['database.backup', 'database.restore'])
    expect(log.at(-1)!.detail.changed).toMatchObject({ from: backup, replaced: true, forced: false })
    expect(fs.readdirSync(dir).sort()).toEqual(['backup.db', 'curriculum.db'])
    expect(readDatabase(file, (database) => database.pragma('integrity_check', { simple: true }))).toBe('ok')

    const text = await cli(['restore', backup], { databaseUrl })
    expect(text.stdout).toContain('start the server: it serves the restored database')
  })

  it('keeps the disclosure and audit rows written since the backup, lists what it undid, and expires every feed cursor', async () => {
    const { dir, file, databaseUrl } = await seededDatabase()
    const keyId = await withStorage(databaseUrl, async ({ db }) => {
      const [acme] = await db.selectFrom('organisations').select('id').execute()
      return (await createApiKey(db, { organisationId: acme!.id, name: 'k', scopes: [], expiresAt: null }, Date.now()))
        .row.id
    })
    const backup = path.join(dir, 'backup.db')
    expect((await cli(['backup', backup], { databaseUrl })).status).toBe(0)
    // After the backup: a disclosure, a revocation and an erasure (which notifies Acme through the feed).
    const disclosureId = await withStorage(databaseUrl, async ({ db }) => {
      const [acme] = await db.selectFrom('organisations').select('id').execute()
      const row = { at: new Date().toISOString(), request_id: 'after-the-backup', key_id: keyId }
      const values = { ...row, organisation_id: acme!.id, student_id: ADA, action: 'progress.read' as const }
      return (
        await db
          .insertInto('disclosures')
          .values({ ...values, outcome: 'disclosed' })
          .returning('id')
          .execute()
      )[0]!.id
    })
    expect((await cli(['key', 'revoke', keyId], { databaseUrl })).status).toBe(0)
    expect((await cli(['students', 'erase', BEN, '--yes'], { databaseUrl })).status).toBe(0)
    const handedOut = readDatabase(file, (database) =>
      Number(
        (database.prepare(`select version from meta where name = 'student_changes'`).get() as { version: number })
          .version,
      ),
    )
    expect(handedOut).toBeGreaterThan(0)

    const result = await cli(['restore', backup, '--json'], { databaseUrl })
    expect(result.status, result.stdout + result.stderr).toBe(0)
    const document = jsonOf(result)
    expect(document.history).toEqual({
      carried: { auditRows: 2, disclosureRows: 1 },
      undone: [
        expect.objectContaining({ action: 'key.revoke', target: `key:${keyId}` }),
        expect.objectContaining({ action: 'students.erase', target: `student:${BEN}` }),
      ],
      erased: [BEN],
      changeCounter: handedOut,
    })
    expect(document.changeFeedFloor).toBe(handedOut + 1)
    const text = await cli(['restore', backup], { databaseUrl })
    expect(text.stdout).toContain('1 student erased after the backup is back; erase them again')
    expect(text.stdout).toContain(`  ${BEN}\n`)

    expect(students(file)).toEqual([ADA, BEN])
    // The second restore kept the first one's row too: it was written after the backup.
    expect(
      auditLog(file)
        .map((row) => row.action)
        .slice(-5),
    ).toEqual(['database.backup', 'key.revoke', 'students.erase', 'database.restore', 'database.restore'])
    await withStorage(databaseUrl, async (storage) => {
      const kept = await storage.db.selectFrom('disclosures').selectAll().where('id', '=', disclosureId).execute()
      expect(kept.map((row) => row.request_id)).toEqual(['after-the-backup'])
      const [acme] = await storage.db.selectFrom('organisations').select('id').execute()
      const access = { at: Date.now(), requestId: 'r', keyId, organisationId: acme!.id, sandbox: false }
      // Any cursor from before the restore has expired; one taken now follows the feed.
      for (const cursor of [0, 1, handedOut])
        expect(await readChangeFeed(storage.writes, access, cursor, 10)).toBe('expired')
      expect(await readChangeFeed(storage.writes, access, 'now', 10)).toMatchObject({ changes: [] })
    })
  })

  it('carries nothing over from a database that is not a later state of the backup', async () => {
    const one = await seededDatabase()
    const other = await seededDatabase()
    const backup = path.join(one.dir, 'backup.db')
    expect((await cli(['backup', backup], { databaseUrl: one.databaseUrl })).status).toBe(0)
    expect((await cli(['org', 'create', '--name', 'Only Elsewhere'], { databaseUrl: other.databaseUrl })).status).toBe(
      0,
    )
    const result = jsonOf(await cli(['restore', backup, '--json'], { databaseUrl: other.databaseUrl }))
    expect(result.history).toEqual({ notCarried: 'the replaced database is not a later state of this backup' })
    expect(auditLog(other.file).map((row) => row.action)).not.toContain('organisation.create')
  })

  it('refuses a database a running server has open and tells the operator to stop it; --force replaces it anyway', async () => {
    const { dir, file, databaseUrl } = await seededDatabase()
    const backup = path.join(dir, 'backup.db')
    expect((await cli(['backup', backup], { databaseUrl })).status).toBe(0)
    const server = await startServer({ DATABASE_URL: databaseUrl, SEED_DEMO: 'false' })
    try {
      const before = digest(file)
      const refused = await cli(['restore', backup], { databaseUrl })
      expect(refused.status).toBe(1)
      expect(refused.stderr).toContain('is open in another process, most likely the running server: stop the server')
      expect(refused.stderr).toContain('nothing was changed')
      expect(digest(file)).toBe(before)

      const forced = await cli(['restore', backup, '--force'], { databaseUrl })
      expect(forced.status, forced.stderr).toBe(0)
      expect(forced.stdout).toContain('the replaced database was in use (--force): restart the server now')
    } finally {
      await server.stop('SIGTERM')
    }
    expect(auditLog(file).at(-1)!.detail.changed).toMatchObject({ forced: true })
    const restarted = await startServer({ DATABASE_URL: databaseUrl, SEED_DEMO: 'false' })
    try {
      expect((await fetch(`${restarted.baseUrl}/readyz`)).status).toBe(200)
    } finally {
      await restarted.stop('SIGTERM')
    }
  })

  it('leaves the old database or the whole restored one when it is killed at any moment', async () => {
    const { dir, file, databaseUrl } = await seededDatabase()
    // A backup large enough that copying it takes a while, holding a student the old database lacks.
    const backupDir = tempDir()
    const source = await seededDatabase()
    await withStorage(source.databaseUrl, async ({ db }) => {
      await upsertStudents(db, [{ id: CLEO, firstName: 'Cleo', tier: 'explorer' }], Date.now())
    })
    // Filler in a table the migrations make: a restore refuses a table of its own.
    const filler = new SQLite(source.file)
    const insert = filler.prepare('insert into settings (name, value) values (?, hex(randomblob(32768)))')
    filler.transaction(() => {
      for (let i = 0; i < 600; i++) insert.run(`filler-${i}`)
    })()
    filler.close()
    const backup = path.join(backupDir, 'large.db')
    expect((await cli(['backup', backup], { databaseUrl: source.databaseUrl })).status).toBe(0)
    const old = [ADA, BEN]
    const restored = [ADA, BEN, CLEO]

    const outcomes = new Set<string>()
    for (const delayMs of [0, 5, 20, 60, 150]) {
      await killedRestore(backup, databaseUrl, dir, delayMs)
      const ids = students(file)
      expect([old, restored], `killed ${delayMs} ms in`).toContainEqual(ids)
      expect(readDatabase(file, (database) => database.pragma('integrity_check', { simple: true }))).toBe('ok')
      outcomes.add(ids.length === 3 ? 'restored' : 'old')
      // What a killed restore leaves is its temporary file only, never the database's name.
      for (const name of fs.readdirSync(dir)) if (name.endsWith('.tmp')) fs.rmSync(path.join(dir, name))
    }
    const finished = await cli(['restore', backup], { databaseUrl })
    expect(finished.status, finished.stderr).toBe(0)
    expect(students(file)).toEqual(restored)
    // The kills landed before the end at least once: otherwise this test proved nothing.
    expect(outcomes.has('old')).toBe(true)
  })
})

const DAY = 86_400_000

/**
 * A database with an agreement of Acme's that ended 40 days ago, whose 30 days of disposition are
 * over: a certificate of deletion can be issued for it.
 */
async function endedAgreementDatabase(): Promise<{ dir: string; file: string; databaseUrl: string }> {
  const dir = tempDir()
  const file = path.join(dir, 'curriculum.db')
  const databaseUrl = `sqlite:${file}`
  const now = Date.now()
  await withStorage(databaseUrl, async ({ db }) => {
    const acme = await createOrganisation(db, 'Acme Learning', now - 400 * DAY)
    await recordAgreement(
      db,
      { organisationId: acme.id, signedAt: now - 400 * DAY, expiresAt: null, documentRef: 'DSA-7', purpose: 'Reading' },
      now - 400 * DAY,
    )
    await upsertStudents(db, [{ id: ADA, firstName: 'Ada', tier: 'explorer' }], now - 300 * DAY)
    await linkStudents(db, [{ studentId: ADA, organisationId: acme.id }], now - 300 * DAY)
    await endAgreements(db, { organisationId: acme.id }, now - 40 * DAY)
    expect(await disposeDueAgreements(db, now)).toHaveLength(1)
  })
  return { dir, file, databaseUrl }
}

/** A certificate of deletion of Acme's ended agreement, issued by the CLI and read from its file. */
async function issuedCertificate(databaseUrl: string): Promise<unknown> {
  const out = path.join(tempDir(), 'certificate.json')
  const issued = await cli(['agreement', 'certificate', '--org', 'Acme Learning', '--out', out], { databaseUrl })
  expect(issued.status, issued.stderr).toBe(0)
  return JSON.parse(fs.readFileSync(out, 'utf8'))
}

/** The key set a server started on the database publishes. */
async function publishedKeys(databaseUrl: string) {
  const server = await startServer({ DATABASE_URL: databaseUrl, SEED_DEMO: 'false' })
  try {
    const response = await fetch(`${server.baseUrl}/.well-known/curriculum-signing-keys`)
    expect(response.status).toBe(200)
    return ((await response.json()) as { keys: PublicJwk[] }).keys
  } finally {
    await server.stop('SIGTERM')
  }
}

function signingKeyRows(file: string): string[] {
  return readDatabase(file, (database) =>
    (
      database.prepare(`select name from settings where name like 'certificate-signing-key%' order by name`).all() as {
        name: string
      }[]
    ).map((row) => row.name),
  )
}

describe('the certificate signing keys across a restore', () => {
  it('a restore from a backup taken before the key existed keeps the key: the certificates issued still verify', async () => {
    const { dir, file, databaseUrl } = await endedAgreementDatabase()
    const backup = path.join(dir, 'backup.db')
    expect((await cli(['backup', backup], { databaseUrl })).status).toBe(0)
    expect(signingKeyRows(backup)).toEqual([])
    const certificate = await issuedCertificate(databaseUrl)

    const restored = await cli(['restore', backup, '--json'], { databaseUrl })
    expect(restored.status, restored.stderr).toBe(0)
    const keys = await publishedKeys(databaseUrl)
    expect(verifyCertificate(certificate, keys)).toBe(true)
    expect(keys).toHaveLength(1)
    // The key stays in use: a certificate issued now is signed by the same key.
    expect(verifyCertificate(await issuedCertificate(databaseUrl), keys)).toBe(true)
    expect(signingKeyRows(file)).toEqual(['certificate-signing-key'])
    expect(jsonOf(restored).signingKeys).toEqual({ written: 1 })
    const text = await cli(['restore', backup], { databaseUrl })
    expect(text.stdout).toContain("kept the replaced database's certificate signing keys")
  })

  it('a restore from a backup with another key keeps both: the key in use stays, the backup’s is published beside it', async () => {
    const { dir, file, databaseUrl } = await endedAgreementDatabase()
    const first = await issuedCertificate(databaseUrl)
    const backup = path.join(dir, 'backup.db')
    expect((await cli(['backup', backup], { databaseUrl })).status).toBe(0)
    // What a restore that lost the key left behind: the next certificate made a new one.
    const database = new SQLite(file)
    database.prepare(`delete from settings where name = 'certificate-signing-key'`).run()
    database.close()
    const second = await issuedCertificate(databaseUrl)
    const kid = (document: unknown) => (document as { signature: { kid: string } }).signature.kid
    expect(kid(second)).not.toBe(kid(first))

    const restored = await cli(['restore', backup, '--json'], { databaseUrl })
    expect(restored.status, restored.stderr).toBe(0)
    const keys = await publishedKeys(databaseUrl)
    expect(verifyCertificate(first, keys)).toBe(true)
    expect(verifyCertificate(second, keys)).toBe(true)
    expect(keys.map((key) => key.kid)).toEqual([kid(second), kid(first)])
    expect(jsonOf(restored).signingKeys).toEqual({ written: 2 })
    // The earlier key's private half is not kept: it signs nothing any more.
    expect(signingKeyRows(file)).toEqual(['certificate-signing-key', `certificate-signing-key:${kid(first)}`])
    const earlier = readDatabase(
      file,
      (db) =>
        db.prepare(`select value from settings where name = ?`).get(`certificate-signing-key:${kid(first)}`) as {
          value: string
        },
    )
    expect(earlier.value).toBe(keys[1]!.x)
  })
})

/** Starts `restore`, and kills it `delayMs` after it first changed anything in `dir`. */
async function killedRestore(backup: string, databaseUrl: string, dir: string, delayMs: number): Promise<void> {
  const before = new Set(fs.readdirSync(dir))
  const inode = fs.statSync(path.join(dir, 'curriculum.db')).ino
  const child = spawn(process.execPath, [CLI, 'restore', backup], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl },
    stdio: 'ignore',
  })
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
  let done = false
  void exited.then(() => (done = true))
  const changed = () => {
    const now = fs.readdirSync(dir)
    return now.some((name) => !before.has(name)) || fs.statSync(path.join(dir, 'curriculum.db')).ino !== inode
  }
  while (!done && !changed()) await new Promise((resolve) => setImmediate(resolve))
  if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs))
  child.kill('SIGKILL')
  await exited
}
