/**
 * Student, link and progress imports from CSV and JSON Lines: what gets stored, and that a file
 * with any problem is reported in full, line by line, and changes nothing.
 */
import { spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { readCatalogDir } from '../../src/catalog/catalog-files.js'
import { createOrganisation } from '../../src/storage/access-repository.js'
import { replaceCatalog } from '../../src/storage/catalog-repository.js'
import { createSandbox } from '../../src/cases/sandbox.js'
import { sandboxStudents } from '../../src/storage/sandbox-repository.js'
import {
  CATALOG_DIR,
  CLI,
  cli,
  countRows,
  jsonOf,
  newDatabaseUrl,
  tempDir,
  useCliHarness,
  withStorage,
} from './cli-harness.js'
import { allLinks } from '../support/linked-students.js'

const ADA = '11111111-1111-4111-8111-111111111111'
const BEN = '22222222-2222-4222-8222-222222222222'
const CLEO = '33333333-3333-4333-8333-333333333333'
const NOBODY = '99999999-9999-4999-8999-999999999999'
const NOW = Date.parse('2026-03-02T09:00:00.000Z')

function write(dir: string, name: string, text: string): string {
  const file = path.join(dir, name)
  fs.writeFileSync(file, text)
  return file
}

const jsonl = (...rows: object[]) => `${rows.map((row) => JSON.stringify(row)).join('\n')}\n`

/** A database with the sample catalog and two organisations, and a folder for the import files. */
async function setUp(): Promise<{ databaseUrl: string; dir: string; acme: string; beta: string }> {
  const databaseUrl = newDatabaseUrl()
  const { acme, beta } = await withStorage(databaseUrl, async ({ db }) => {
    const catalog = readCatalogDir(CATALOG_DIR)
    if (!catalog.ok) throw new Error('the sample catalog is invalid')
    await replaceCatalog(db, catalog.catalog)
    return {
      acme: (await createOrganisation(db, 'Acme Learning', NOW)).id,
      beta: (await createOrganisation(db, 'Beta Tutors', NOW)).id,
    }
  })
  return { databaseUrl, dir: tempDir(), acme, beta }
}

useCliHarness()

describe('imports', () => {
  it('store students, links and progress from CSV and JSON Lines', async () => {
    const { databaseUrl, dir, acme, beta } = await setUp()
    const run = (...args: string[]) => cli(args, { databaseUrl, cwd: dir })

    // CRLF line ends, a quoted field, an upper-case id (stored lower-case).
    write(
      dir,
      'students.csv',
      `id,firstName,tier\r\n${ADA.toUpperCase()},Ada,explorer\r\n${BEN},"Mary-Jane",builder\r\n`,
    )
    const csv = await run('students', 'import', 'students.csv')
    expect(csv.status).toBe(0)
    expect(csv.stdout).toMatch(/^imported 2 students from students\.csv in \d+\.\d s\n$/)
    // Not a terminal: no progress line.
    expect(csv.stderr).toBe('')

    write(
      dir,
      'students.jsonl',
      jsonl({ id: CLEO, firstName: 'Zoë', tier: 'innovator' }, { id: ADA, firstName: 'Ada', tier: 'builder' }),
    )
    expect(jsonOf(await run('students', 'import', 'students.jsonl', '--json'))).toEqual({
      ok: true,
      file: 'students.jsonl',
      format: 'jsonl',
      rows: 2,
    })

    write(dir, 'links.csv', `studentId,organisation\n${ADA},Acme Learning\n${BEN},${acme.toUpperCase()}\n`)
    write(
      dir,
      'links.ndjson',
      jsonl({ studentId: BEN, organisation: 'Beta Tutors' }, { studentId: CLEO, organisation: beta }),
    )
    expect((await run('links', 'import', 'links.csv')).stdout).toMatch(/^imported 2 links from links\.csv/)
    expect(jsonOf(await run('links', 'import', 'links.ndjson', '--json'))).toMatchObject({
      ok: true,
      format: 'jsonl',
      rows: 2,
    })

    write(
      dir,
      'progress.csv',
      [
        'studentId,lessonSlug,status,xp,timeSeconds,startedAt,completedAt',
        `${ADA},explorer/e1-robots-follow-instructions,completed,100,900,2026-01-10T10:00:00Z,2026-01-10T11:15:00+01:00`,
        `${ADA},explorer/e99-retired-lesson,in_progress,5,60,2026-01-11T10:00:00.5Z,`,
      ].join('\n'),
    )
    write(
      dir,
      'progress.jsonl',
      jsonl({
        studentId: BEN,
        lessonSlug: 'builder/b2-loops-save-time',
        status: 'in_progress',
        xp: 0,
        timeSeconds: 0,
        startedAt: '2026-02-01T08:00:00Z',
        completedAt: null,
      }),
    )
    // The retired lesson is no longer in the catalog: only the explicit flag lets it in.
    expect(jsonOf(await run('progress', 'import', 'progress.csv', '--allow-unknown-lessons', '--json'))).toMatchObject({
      ok: true,
      rows: 2,
    })
    expect((await run('progress', 'import', 'progress.jsonl')).stdout).toMatch(
      /^imported 1 progress row from progress\.jsonl/,
    )

    const stored = await withStorage(databaseUrl, async ({ db }) => ({
      students: await db.selectFrom('students').select(['id', 'first_name', 'tier']).orderBy('id').execute(),
      links: await allLinks(db),
      progress: await db.selectFrom('progress').selectAll().orderBy('student_id').orderBy('lesson_slug').execute(),
    }))
    expect(stored.students).toEqual([
      { id: ADA, first_name: 'Ada', tier: 'builder' },
      { id: BEN, first_name: 'Mary-Jane', tier: 'builder' },
      { id: CLEO, first_name: 'Zoë', tier: 'innovator' },
    ])
    expect(stored.links).toEqual(
      [
        { student_id: ADA, organisation_id: acme },
        { student_id: BEN, organisation_id: acme },
        { student_id: BEN, organisation_id: beta },
        { student_id: CLEO, organisation_id: beta },
      ].sort((a, b) => a.student_id.localeCompare(b.student_id) || a.organisation_id.localeCompare(b.organisation_id)),
    )
    expect(stored.progress).toEqual([
      {
        student_id: ADA,
        lesson_slug: 'explorer/e1-robots-follow-instructions',
        status: 'completed',
        xp: 100,
        time_seconds: 900,
        started_at: '2026-01-10T10:00:00.000Z',
        completed_at: '2026-01-10T10:15:00.000Z',
      },
      {
        student_id: ADA,
        lesson_slug: 'explorer/e99-retired-lesson',
        status: 'in_progress',
        xp: 5,
        time_seconds: 60,
        started_at: '2026-01-11T10:00:00.500Z',
        completed_at: null,
      },
      {
        student_id: BEN,
        lesson_slug: 'builder/b2-loops-save-time',
        status: 'in_progress',
        xp: 0,
        time_seconds: 0,
        started_at: '2026-02-01T08:00:00.000Z',
        completed_at: null,
      },
    ])
  })

  it('report every problem of a bad students file with its line, and write nothing', async () => {
    const { databaseUrl, dir } = await setUp()
    write(dir, 'good.csv', `id,firstName,tier\n${ADA},Ada,explorer\n`)
    await cli(['students', 'import', 'good.csv'], { databaseUrl, cwd: dir })
    const before = await countRows(databaseUrl)

    write(
      dir,
      'bad.csv',
      [
        'id,firstName,tier,lastName', // 1: a column that must not exist
        `${BEN},Ben,builder,Smith`, // 2: fine apart from the column
        `${CLEO},cleo@example.com,explorer,`, // 3: an e-mail address as a first name
        `${NOBODY},Dev,wizard,`, // 4: no such tier
        `${BEN},Benjamin,builder,`, // 5: the same id as line 2
        'not-a-uuid,Eve,explorer,', // 6: a malformed id
        `${ADA},Ada Lovelace,explorer,`, // 7: a surname
      ].join('\n'),
    )
    const [text, json] = await Promise.all([
      cli(['students', 'import', 'bad.csv'], { databaseUrl, cwd: dir }),
      cli(['students', 'import', 'bad.csv', '--json'], { databaseUrl, cwd: dir }),
    ])
    expect(text.status).toBe(1)
    expect(text.stdout).toBe('')
    const lines = text.stderr.trim().split('\n')
    expect(lines.map((line) => line.split(': ').slice(0, 2).join(': '))).toEqual([
      'bad.csv:1: lastName',
      'bad.csv:3: firstName',
      'bad.csv:4: tier',
      'bad.csv:5: id',
      'bad.csv:6: id',
      'bad.csv:7: firstName',
      'error: bad.csv',
    ])
    expect(lines[0]).toBe(
      'bad.csv:1: lastName: only id, firstName and tier are accepted: student records hold first names only',
    )
    expect(lines[3]).toBe(`bad.csv:5: id: student ${BEN} is already on line 2`)
    expect(lines.at(-1)).toBe('error: bad.csv: 6 problems; nothing was imported')

    expect(json.status).toBe(1)
    const document = jsonOf(json)
    expect(document.ok).toBe(false)
    expect(document.error.problems).toHaveLength(6)
    expect(document.error.problems[2]).toEqual({
      file: 'bad.csv',
      line: 4,
      field: 'tier',
      message: 'must be one of explorer, builder, innovator (got "wizard")',
    })

    expect(await countRows(databaseUrl)).toEqual(before)
  })

  it('report extra fields, bad JSON and missing fields in JSON Lines, line by line', async () => {
    const { databaseUrl, dir } = await setUp()
    write(
      dir,
      'bad.jsonl',
      [
        JSON.stringify({ id: ADA, firstName: 'Ada', tier: 'explorer' }),
        '',
        JSON.stringify({
          id: BEN,
          firstName: 'Ben',
          tier: 'builder',
          birthDate: '2015-04-01',
          email: 'ben@example.com',
        }),
        '{"id": "broken",',
        JSON.stringify({ id: CLEO, tier: 'innovator' }),
        JSON.stringify(['not', 'an', 'object']),
        JSON.stringify({ id: ADA.toUpperCase(), firstName: 'Ada', tier: 'explorer' }),
      ].join('\r\n'),
    )
    const result = await cli(['students', 'import', 'bad.jsonl', '--json'], { databaseUrl, cwd: dir })
    expect(result.status).toBe(1)
    const problems = jsonOf(result).error.problems.map(
      (p: { line: number; field?: string }) => `${p.line}:${p.field ?? ''}`,
    )
    expect(problems).toEqual(['3:birthDate', '3:email', '4:', '5:firstName', '6:', '7:id'])
    expect(await countRows(databaseUrl)).toEqual({ students: 0, links: 0, progress: 0 })
  })

  it('report links and progress rows that name unknown students or organisations, and bad progress rows', async () => {
    const { databaseUrl, dir } = await setUp()
    write(dir, 'students.csv', `id,firstName,tier\n${ADA},Ada,explorer\n`)
    await cli(['students', 'import', 'students.csv'], { databaseUrl, cwd: dir })
    const before = await countRows(databaseUrl)

    write(
      dir,
      'links.csv',
      [
        'studentId,organisation',
        `${ADA},Acme Learning`,
        `${NOBODY},Acme Learning`,
        `${ADA},Nobody Ltd`,
        `${ADA},Acme Learning`,
      ].join('\n'),
    )
    write(
      dir,
      'progress.csv',
      [
        'studentId,lessonSlug,status,xp,timeSeconds,startedAt,completedAt',
        `${ADA},explorer/e1-robots-follow-instructions,completed,10,60,2026-01-10T10:00:00Z,`, // 2: completed without completedAt
        `${ADA},explorer/e2-steps-in-order,in_progress,10,60,2026-01-10T10:00:00Z,2026-01-10T11:00:00Z`, // 3: in progress yet completed
        `${ADA},explorer/e3-patterns-all-around,completed,10,60,2026-01-10T10:00:00Z,2026-01-09T10:00:00Z`, // 4: completed before started
        `${ADA},Explorer/E4,completed,-1,1.5,2026-01-10,2026-01-10T10:00:00Z`, // 5: slug, xp, timeSeconds, startedAt
        `${NOBODY},explorer/e5-bug-hunters,done,1,1,2026-01-10T10:00:00Z,`, // 6: status, and no such student
        `${NOBODY},explorer/e6-secret-passwords,in_progress,1,1,2026-01-10T10:00:00Z,`, // 7: no such student
        `${ADA},explorer/e6-secret-passwords,in_progress,1,1,2026-01-10T10:00:00Z,`, // 8: fine
        `${ADA},explorer/e6-secret-passwords,in_progress,1,1,2026-01-10T10:00:00Z,`, // 9: the same lesson again
      ].join('\n'),
    )
    const [links, progress] = await Promise.all([
      cli(['links', 'import', 'links.csv', '--json'], { databaseUrl, cwd: dir }),
      cli(['progress', 'import', 'progress.csv', '--json'], { databaseUrl, cwd: dir }),
    ])
    const located = (result: typeof links) =>
      jsonOf(result).error.problems.map((p: { line: number; field: string }) => `${p.line}:${p.field}`)
    expect(links.status).toBe(1)
    expect(located(links)).toEqual(['3:studentId', '4:organisation', '5:organisation'])
    expect(progress.status).toBe(1)
    expect(located(progress)).toEqual([
      '2:completedAt',
      '3:completedAt',
      '4:completedAt',
      '5:lessonSlug',
      '5:xp',
      '5:timeSeconds',
      '5:startedAt',
      '6:status',
      '6:studentId',
      '7:studentId',
      '9:lessonSlug',
    ])
    const messages = jsonOf(progress).error.problems.map((p: { message: string }) => p.message)
    expect(messages[0]).toBe('is required when status is completed')
    expect(messages[9]).toBe(`no student ${NOBODY}; import the student first`)
    expect(await countRows(databaseUrl)).toEqual(before)
  })

  it('refuse rows that name a sandbox student, and change nothing', async () => {
    const { databaseUrl, dir, acme } = await setUp()
    const sandboxStudent = await withStorage(
      databaseUrl,
      async ({ db }) => (await sandboxStudents(db, (await createSandbox(db, 'partner@example.org', NOW)).id))[0]!,
    )
    const stored = () =>
      withStorage(databaseUrl, ({ db }) =>
        db
          .selectFrom('students')
          .select(['id', 'first_name', 'tier', 'sandbox'])
          .where('id', '=', sandboxStudent.id)
          .executeTakeFirst(),
      )
    const before = await stored()
    const counts = await countRows(databaseUrl)

    const otherTier = sandboxStudent.tier === 'builder' ? 'explorer' : 'builder'
    write(
      dir,
      'students.csv',
      ['id,firstName,tier', `${ADA},Ada,explorer`, `${sandboxStudent.id.toUpperCase()},Realname,${otherTier}`].join(
        '\n',
      ),
    )
    write(dir, 'links.csv', ['studentId,organisation', `${sandboxStudent.id},${acme}`].join('\n'))
    write(
      dir,
      'progress.csv',
      [
        'studentId,lessonSlug,status,xp,timeSeconds,startedAt,completedAt',
        `${sandboxStudent.id},explorer/e1-robots-follow-instructions,in_progress,1,1,2026-01-10T10:00:00Z,`,
      ].join('\n'),
    )
    const run = (what: string) => cli([what, 'import', `${what}.csv`, '--json'], { databaseUrl, cwd: dir })
    const [students, links, progress] = await Promise.all([run('students'), run('links'), run('progress')])
    for (const result of [students, links, progress]) {
      expect(result.status).toBe(1)
      const problems = jsonOf(result).error.problems
      expect(problems).toHaveLength(1)
      expect(problems[0].message).toBe(
        `student ${sandboxStudent.id} is a sandbox (synthetic) student; imports never change sandbox students`,
      )
    }
    expect([students, links, progress].map((result) => jsonOf(result).error.problems[0].line)).toEqual([3, 2, 2])

    expect(await stored()).toEqual(before)
    expect(before).toMatchObject({ first_name: sandboxStudent.first_name, sandbox: 1 })
    expect(await countRows(databaseUrl)).toEqual(counts)
  })

  it('refuse progress in a lesson the catalog does not have, line by line, unless --allow-unknown-lessons', async () => {
    const { databaseUrl, dir } = await setUp()
    write(dir, 'students.csv', `id,firstName,tier\n${ADA},Ada,explorer\n`)
    expect((await cli(['students', 'import', 'students.csv'], { databaseUrl, cwd: dir })).status).toBe(0)
    const before = await countRows(databaseUrl)
    write(
      dir,
      'progress.csv',
      [
        'studentId,lessonSlug,status,xp,timeSeconds,startedAt,completedAt',
        `${ADA},explorer/e1-robots-follow-instructions,in_progress,1,1,2026-01-10T10:00:00Z,`,
        `${ADA},explorer/e99-nope,in_progress,1,1,2026-01-10T10:00:00Z,`,
        `${NOBODY},builder/b77-not-yet-written,in_progress,1,1,2026-01-10T10:00:00Z,`,
      ].join('\n'),
    )
    const [text, json] = await Promise.all([
      cli(['progress', 'import', 'progress.csv'], { databaseUrl, cwd: dir }),
      cli(['progress', 'import', 'progress.csv', '--json'], { databaseUrl, cwd: dir }),
    ])
    expect(text.status).toBe(1)
    expect(text.stderr.trim().split('\n')).toEqual([
      'progress.csv:3: lessonSlug: the stored catalog has no lesson "explorer/e99-nope"; import the catalog that ' +
        'has it first (curriculum catalog import), or pass --allow-unknown-lessons while one is being replaced',
      'progress.csv:4: lessonSlug: the stored catalog has no lesson "builder/b77-not-yet-written"; import the ' +
        'catalog that has it first (curriculum catalog import), or pass --allow-unknown-lessons while one is being replaced',
      `progress.csv:4: studentId: no student ${NOBODY}; import the student first`,
      'error: progress.csv: 3 problems; nothing was imported',
    ])
    expect(json.status).toBe(1)
    expect(jsonOf(json).error.problems.map((p: { line: number; field: string }) => `${p.line}:${p.field}`)).toEqual([
      '3:lessonSlug',
      '4:lessonSlug',
      '4:studentId',
    ])
    expect(await countRows(databaseUrl)).toEqual(before)

    // With the flag, the unknown lessons are accepted; the unknown student still is not.
    const allowed = await cli(['progress', 'import', 'progress.csv', '--allow-unknown-lessons', '--json'], {
      databaseUrl,
      cwd: dir,
    })
    expect(jsonOf(allowed).error.problems.map((p: { line: number; field: string }) => `${p.line}:${p.field}`)).toEqual([
      '4:studentId',
    ])
    write(dir, 'two.csv', fs.readFileSync(path.join(dir, 'progress.csv'), 'utf8').split('\n').slice(0, 3).join('\n'))
    expect(
      jsonOf(
        await cli(['progress', 'import', 'two.csv', '--allow-unknown-lessons', '--json'], { databaseUrl, cwd: dir }),
      ),
    ).toMatchObject({ ok: true, rows: 2 })
    expect(await countRows(databaseUrl)).toEqual({ ...before, progress: before.progress + 2 })
  })

  it('refuse to link a real student to a sandbox organisation, by name or id, and change nothing', async () => {
    const { databaseUrl, dir } = await setUp()
    const sandbox = await withStorage(databaseUrl, ({ db }) => createSandbox(db, 'partner@example.org', NOW))
    write(dir, 'students.csv', `id,firstName,tier\n${ADA},Ada,explorer\n`)
    expect((await cli(['students', 'import', 'students.csv'], { databaseUrl, cwd: dir })).status).toBe(0)
    const before = await countRows(databaseUrl)
    write(
      dir,
      'links.csv',
      ['studentId,organisation', `${ADA},Acme Learning`, `${ADA},${sandbox.name}`, `${ADA},${sandbox.id}`].join('\n'),
    )
    const result = await cli(['links', 'import', 'links.csv'], { databaseUrl, cwd: dir })
    expect(result.status).toBe(1)
    const message =
      `"${sandbox.name}" is a sandbox organisation, which holds synthetic students only; ` +
      'link real students to a partner organisation'
    expect(result.stderr.trim().split('\n')).toEqual([
      `links.csv:3: organisation: ${message}`,
      `links.csv:4: organisation: ${message}`,
      'error: links.csv: 2 problems; nothing was imported',
    ])
    expect(await countRows(databaseUrl)).toEqual(before)
  })

  it('take the format from --format, and refuse a file whose format is unknown', async () => {
    const { databaseUrl, dir } = await setUp()
    write(dir, 'students.txt', `id,firstName,tier\n${ADA},Ada,explorer\n`)
    const [unknown, explicit, missing, empty] = await Promise.all([
      cli(['students', 'import', 'students.txt', '--json'], { databaseUrl, cwd: dir }),
      cli(['students', 'import', 'students.txt', '--format', 'csv', '--json'], { databaseUrl, cwd: dir }),
      cli(['students', 'import', 'nowhere.csv', '--json'], { databaseUrl, cwd: dir }),
      cli(['students', 'import', write(dir, 'empty.csv', ''), '--json'], { databaseUrl, cwd: dir }),
    ])
    expect(unknown.status).toBe(2)
    expect(jsonOf(unknown).error.message).toMatch(/--format csv\|jsonl/)
    expect(jsonOf(explicit)).toMatchObject({ ok: true, format: 'csv', rows: 1 })
    expect(missing.status).toBe(1)
    expect(jsonOf(missing).error.message).toBe('no file "nowhere.csv"')
    expect(empty.status).toBe(1)
    expect(jsonOf(empty).error.problems[0].message).toMatch(/the file is empty/)
  })
})

describe('import progress', () => {
  // util-linux `script` runs the command on a pseudo-terminal, as an operator's shell would.
  const hasScript = process.platform === 'linux' && spawnSync('script', ['--version']).status === 0

  it.skipIf(!hasScript)('is drawn on a terminal with carriage returns', async () => {
    const { databaseUrl, dir } = await setUp()
    const rows = Array.from({ length: 3000 }, () => `${randomUUID()},Ada,explorer`)
    const file = write(dir, 'many.csv', ['id,firstName,tier', ...rows].join('\n'))
    const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} students import ${JSON.stringify(file)}`
    const result = spawnSync('script', ['-qec', command, '/dev/null'], {
      env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl },
      encoding: 'utf8',
    })
    expect(result.status).toBe(0)
    expect(result.stdout).toContain('\rvalidated 3,000 rows')
    expect(result.stdout).toContain('\rwritten 3,000/3,000')
    expect(result.stdout).toMatch(/imported 3,000 students/)
    expect(await countRows(databaseUrl)).toMatchObject({ students: 3000 })
  })
})
