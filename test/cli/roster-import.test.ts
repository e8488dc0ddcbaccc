/**
 * `curriculum roster import`: the preview, --dry-run writing nothing, every bad row as
 * file:line: field: message with nothing written, a delta that would erase stopping until
 * --confirm-erase, an import that takes students out of schools asking first (--yes without a
 * terminal), one audit row of counts, and no family name in any output.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { createOrganisation } from '../../src/storage/access-repository.js'
import {
  manifest,
  ORGS_HEADER,
  removeTempDirs as removeExports,
  table,
  USERS_11_HEADER,
  writeFolder,
  writeZip,
} from '../roster/roster-export.js'
import { cli, countRows, ENGINES, jsonOf, newDatabaseUrl, useCliHarness, withStorage } from './cli-harness.js'
import { expectConfirmation } from './confirmation-checks.js'

useCliHarness()
afterAll(removeExports)

const ORGS = table(ORGS_HEADER, [
  { sourcedId: 'sch-north', name: 'North Elementary', type: 'school' },
  { sourcedId: 'sch-south', name: 'South Middle', type: 'school' },
])
const student = (sourcedId: string, givenName: string, orgSourcedIds: string, status = '') => ({
  sourcedId,
  status,
  role: 'student',
  orgSourcedIds,
  givenName,
  familyName: 'Surnamington',
  email: `${sourcedId}@mail.example.org`,
})
const BULK = {
  'manifest.csv': manifest('1.1', { orgs: 'bulk', users: 'bulk' }),
  'orgs.csv': ORGS,
  'users.csv': table(USERS_11_HEADER, [
    student('s1', 'Ada', 'sch-north'),
    student('s2', 'Ben', 'sch-north,sch-south'),
    { sourcedId: 't1', role: 'teacher', orgSourcedIds: 'sch-north', givenName: 'Mary', familyName: 'Teachwell' },
  ]),
}
const DELTA = {
  'manifest.csv': manifest('1.1', { orgs: 'absent', users: 'delta' }),
  'users.csv': table(USERS_11_HEADER, [student('s2', 'Ben', 'sch-north', 'tobedeleted')]),
}

const auditRows = (databaseUrl: string) =>
  withStorage(databaseUrl, ({ db }) =>
    db.selectFrom('audit_log').select(['action', 'target', 'detail']).where('action', '=', 'roster.import').execute(),
  )

describe('curriculum roster import', () => {
  it('previews with --dry-run and writes nothing, then imports a .zip with one audit row', async () => {
    const databaseUrl = newDatabaseUrl()
    const zip = writeZip(BULK)
    const dry = await cli(['roster', 'import', zip, '--dry-run', '--json'], { databaseUrl })
    expect(dry.status, dry.stderr).toBe(0)
    expect(jsonOf(dry)).toMatchObject({
      ok: true,
      dryRun: true,
      preview: { version: '1.1', kind: 'bulk', students: { new: 2 }, schools: { new: 2 }, attendance: { joining: 3 } },
    })
    expect((await countRows(databaseUrl)).students).toBe(0)
    expect(await auditRows(databaseUrl)).toEqual([])

    const text = await cli(['roster', 'import', zip, '--dry-run'], { databaseUrl })
    expect(text.stdout).toContain('students: 2 new, 0 changed')
    expect(text.stdout).toContain('Never stored, logged or shown: family and middle names')
    expect(text.stdout).toContain('dry run: nothing was written')

    const done = await cli(['roster', 'import', zip, '--tier', 'builder', '--json'], { databaseUrl })
    expect(done.status, done.stderr).toBe(0)
    expect(jsonOf(done)).toMatchObject({ ok: true, students: { new: 2 }, erased: [] })
    expect((await countRows(databaseUrl)).students).toBe(2)
    const audit = await auditRows(databaseUrl)
    expect(audit).toHaveLength(1)
    expect(audit[0]!.target).toBe('roster:roster.zip')
    expect(JSON.parse(audit[0]!.detail!).changed).toMatchObject({ tier: 'builder', students: { new: 2 } })
    for (const output of [dry.stdout, text.stdout, done.stdout, JSON.stringify(audit)])
      expect(output).not.toMatch(/Surnamington|Teachwell|mail\.example|Ada|Ben/)
  })

  it('reports every bad row as file:line: field: message and writes nothing', async () => {
    const databaseUrl = newDatabaseUrl()
    const folder = writeFolder({
      ...BULK,
      'users.csv': table(USERS_11_HEADER, [
        student('s1', 'Ada', 'sch-north'),
        student('s2', '', 'sch-north'),
        student('s3', 'Cy', 'sch-nowhere'),
      ]),
    })
    const result = await cli(['roster', 'import', folder], { databaseUrl })
    expect(result.status).toBe(1)
    const lines = result.stderr.trim().split('\n')
    expect(lines[0]).toMatch(/^users\.csv:3: givenName: /)
    expect(lines[1]).toBe('users.csv:4: orgSourcedIds: names the org "sch-nowhere", which orgs.csv does not hold')
    expect(lines.at(-1)).toContain('2 problems; nothing was imported')
    expect(result.stderr).not.toMatch(/Surnamington|mail\.example/)
    expect((await countRows(databaseUrl)).students).toBe(0)
  })

  it('stops a delta that would erase until --confirm-erase and --yes, saying how many', async () => {
    const databaseUrl = newDatabaseUrl()
    expect((await cli(['roster', 'import', writeFolder(BULK)], { databaseUrl })).status).toBe(0)
    const delta = writeFolder(DELTA)
    const stopped = await cli(['roster', 'import', delta, '--yes', '--json'], { databaseUrl })
    expect(stopped.status).toBe(1)
    expect(jsonOf(stopped)).toMatchObject({ ok: false, error: { preview: { students: { toErase: 1 } } } })
    expect(jsonOf(stopped).error.message).toContain('would erase 1 student (tobedeleted); nothing was imported')
    expect(jsonOf(stopped).error.message).toContain('--confirm-erase')
    expect((await countRows(databaseUrl)).students).toBe(2)

    // --confirm-erase allows the erasure; without a terminal, writing it takes --yes as well.
    const unconfirmed = await cli(['roster', 'import', delta, '--confirm-erase'], { databaseUrl })
    expect(unconfirmed.status).toBe(3)
    expect(unconfirmed.stdout).toContain('this import ends: 1 student erased for good')
    expect(unconfirmed.stderr).toMatch(/nothing was written: to import it, run it again with --yes/)
    expect((await countRows(databaseUrl)).students).toBe(2)

    const erased = await cli(['roster', 'import', delta, '--confirm-erase', '--yes', '--json'], { databaseUrl })
    expect(erased.status, erased.stderr).toBe(0)
    expect(jsonOf(erased).erased).toHaveLength(1)
    expect((await countRows(databaseUrl)).students).toBe(1)
    expect(await auditRows(databaseUrl)).toHaveLength(2)
  })
})

/** The same district's export with Ada missing, as a cut-short users.csv would be: she leaves North Elementary. */
const MOVED = {
  'manifest.csv': manifest('1.1', { orgs: 'bulk', users: 'bulk' }),
  'orgs.csv': ORGS,
  'users.csv': table(USERS_11_HEADER, [student('s2', 'Ben', 'sch-north,sch-south')]),
}

describe.each(ENGINES)('curriculum roster import on %s', (_engine, databaseUrlOf) => {
  it('asks before an import that takes students out of shared schools, and writes only when confirmed', async () => {
    const moved = writeFolder(MOVED)
    await expectConfirmation({
      argv: ['roster', 'import', moved],
      async arrange() {
        const databaseUrl = databaseUrlOf()
        await withStorage(databaseUrl, ({ db }) => createOrganisation(db, 'Acme Learning', Date.now()))
        // A first import only adds: it writes without asking, as a script runs it.
        const first = await cli(['roster', 'import', writeFolder(BULK), '--json'], { databaseUrl })
        expect(first.status, first.stdout + first.stderr).toBe(0)
        const shared = await cli(['links', 'add', '--org', 'Acme Learning', '--school', 'North Elementary'], {
          databaseUrl,
        })
        expect(shared.status, shared.stderr).toBe(0)
        return databaseUrl
      },
      state: (databaseUrl) =>
        withStorage(databaseUrl, async ({ db }) => ({
          attending: await db
            .selectFrom('student_schools')
            .select(['student_id', 'school_id'])
            .orderBy('student_id')
            .orderBy('school_id')
            .execute(),
          linked: await db
            .selectFrom('student_organisations')
            .select(['student_id', 'organisation_id'])
            .orderBy('student_id')
            .execute(),
          imports: (await db.selectFrom('audit_log').select('id').where('action', '=', 'roster.import').execute())
            .length,
        })),
      preview:
        /1 no longer present[\s\S]*this import ends: 1 student leaves a school, ending 1 partner link \(Acme Learning 1\)/,
    })
  }, 180_000)
})
