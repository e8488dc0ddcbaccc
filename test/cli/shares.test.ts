/**
 * Schools and shares from the command line, run as the operator runs them: adding and listing
 * schools, recording who attends which (all or nothing, every bad row with its line), sharing a
 * school or a list with an organisation, listing and ending shares, and `links import` holding
 * its links in a list share named after the file; every change with its audit row, every command
 * with --json. Ending a share and recording students leaving a shared school ask first.
 */
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { createSandbox } from '../../src/cases/sandbox.js'
import { createOrganisation } from '../../src/storage/access-repository.js'
import { sandboxStudents } from '../../src/storage/sandbox-repository.js'
import { upsertStudents } from '../../src/storage/student-import-repository.js'
import { expectSharesHoldEveryLink } from '../support/share-invariant.js'
import { cli, ENGINES, jsonOf, newDatabaseUrl, tempDir, useCliHarness, withStorage } from './cli-harness.js'
import { expectConfirmation } from './confirmation-checks.js'
import { studentIdsOf } from '../support/linked-students.js'

useCliHarness()

const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`
const NOW = Date.parse('2026-03-02T09:00:00.000Z')
const ACTOR = ['--actor', 'Robin at the district office']

/** Acme, a sandbox, and students 1..6 (student 6 with the external id "SIS-6"). */
async function arrange(databaseUrl: string): Promise<{ acme: string; sandbox: string; synthetic: string }> {
  return withStorage(databaseUrl, async ({ db }) => {
    const acme = await createOrganisation(db, 'Acme Learning', NOW)
    await upsertStudents(
      db,
      [1, 2, 3, 4, 5, 6].map((n) => ({ id: uuid(n), firstName: `S${n}`, tier: 'explorer' as const })),
      NOW,
    )
    await db.updateTable('students').set({ external_id: 'SIS-6' }).where('id', '=', uuid(6)).execute()
    const sandbox = await createSandbox(db, 'cli-shares@example.org', NOW)
    const [synthetic] = await sandboxStudents(db, sandbox.id)
    return { acme: acme.id, sandbox: sandbox.name, synthetic: synthetic!.id }
  })
}

function write(name: string, lines: readonly string[]): string {
  const file = path.join(tempDir(), name)
  fs.writeFileSync(file, `${lines.join('\n')}\n`)
  return file
}

const linked = (databaseUrl: string, organisationId: string) =>
  withStorage(databaseUrl, async ({ db }) => {
    await expectSharesHoldEveryLink(db)
    return studentIdsOf(db, organisationId)
  })

const auditRows = (databaseUrl: string, action: string) =>
  withStorage(databaseUrl, ({ db }) =>
    db.selectFrom('audit_log').selectAll().where('action', '=', action).orderBy('id').execute(),
  )

describe('schools and shares', () => {
  it('adds and lists schools, records attendance all or nothing, and shares follow the school', async () => {
    const databaseUrl = newDatabaseUrl()
    const { acme } = await arrange(databaseUrl)
    const added = await cli(
      ['schools', 'add', '--name', 'Hillside Primary', '--identifier', 'HP-01', '--json', ...ACTOR],
      {
        databaseUrl,
      },
    )
    expect(added.status).toBe(0)
    const { school } = jsonOf(added)
    expect(school).toMatchObject({ name: 'Hillside Primary', identifier: 'HP-01', externalId: null })
    const again = await cli(['schools', 'add', '--name', 'Hillside Primary', '--json'], { databaseUrl })
    expect([again.status, jsonOf(again).error.message]).toEqual([1, expect.stringMatching(/exists already/)])
    const [row] = await auditRows(databaseUrl, 'schools.add')
    expect(row).toMatchObject({ actor: 'cli:Robin at the district office', target: `school:${school.id}` })
    expect(JSON.parse(row!.detail).changed).toEqual({ name: 'Hillside Primary', identifier: 'HP-01' })

    // A file with any bad row changes nothing, and says where each problem is.
    const bad = write('bad-members.csv', [
      'studentId,school,status',
      `${uuid(1)},Hillside Primary,`,
      `${uuid(1)},Hillside Primary,left`,
      `${uuid(99)},Hillside Primary,attends`,
      `${uuid(2)},Nowhere High,attends`,
      `${uuid(3)},Hillside Primary,moved`,
    ])
    const refused = await cli(['schools', 'members', 'import', bad, '--json'], { databaseUrl })
    expect(refused.status).toBe(1)
    expect(jsonOf(refused).error.problems.map((p: { line: number; field: string }) => `${p.line}:${p.field}`)).toEqual([
      '3:school',
      '4:studentId',
      '5:school',
      '6:status',
    ])
    expect(await listSchools(databaseUrl)).toEqual([[school.id, 0, 0]])

    const members = write('members.csv', ['studentId,school', `${uuid(1)},Hillside Primary`, `${uuid(2)},${school.id}`])
    const imported = await cli(['schools', 'members', 'import', members, '--json', ...ACTOR], { databaseUrl })
    expect([imported.status, jsonOf(imported).rows]).toEqual([0, 2])
    expect((await auditRows(databaseUrl, 'schools.members.import')).length).toBe(1)

    const shared = await cli(
      ['links', 'add', '--org', 'Acme Learning', '--school', 'Hillside Primary', '--json', ...ACTOR],
      {
        databaseUrl,
      },
    )
    expect(shared.status).toBe(0)
    const { share } = jsonOf(shared)
    expect(share).toMatchObject({ kind: 'school', label: 'Hillside Primary', students: 2, linked: 2 })
    expect(await linked(databaseUrl, acme)).toEqual([uuid(1), uuid(2)])
    const [addRow] = await auditRows(databaseUrl, 'links.add')
    expect(addRow).toMatchObject({ actor: 'cli:Robin at the district office', target: `share:${share.id}` })
    expect(JSON.parse(addRow!.detail).changed).toMatchObject({ organisationId: acme, kind: 'school', students: 2 })
    const twice = await cli(['links', 'add', '--org', 'Acme Learning', '--school', school.id, '--json'], {
      databaseUrl,
    })
    expect([twice.status, jsonOf(twice).error.message]).toEqual([
      1,
      expect.stringMatching(/shared with this organisation already/),
    ])

    // Future: one joins, one leaves.
    const changes = write('changes.jsonl', [
      JSON.stringify({ studentId: uuid(3), school: 'Hillside Primary' }),
      JSON.stringify({ studentId: uuid(2), school: 'Hillside Primary', status: 'left' }),
    ])
    expect((await cli(['schools', 'members', 'import', changes, '--yes'], { databaseUrl })).status).toBe(0)
    expect(await linked(databaseUrl, acme)).toEqual([uuid(1), uuid(3)])
    expect(await listSchools(databaseUrl)).toEqual([[school.id, 2, 1]])

    const listing = await cli(['schools', 'list'], { databaseUrl })
    expect(listing.stdout).toMatch(/Hillside Primary\s+HP-01\s+-\s+-\s+2\s+1/)
  }, 120_000)

  it('shares a list by ids or external ids, lists shares, and ends a school share keeping what a list holds', async () => {
    const databaseUrl = newDatabaseUrl()
    const { acme, sandbox, synthetic } = await arrange(databaseUrl)
    await cli(['schools', 'add', '--name', 'Oakwood High'], { databaseUrl })
    const members = write('m.csv', ['studentId,school', `${uuid(4)},Oakwood High`, `${uuid(5)},Oakwood High`])
    expect((await cli(['schools', 'members', 'import', members], { databaseUrl })).status).toBe(0)
    expect((await cli(['links', 'add', '--org', acme, '--school', 'Oakwood High'], { databaseUrl })).status).toBe(0)

    const badList = write('bad.csv', ['student', uuid(5), 'SIS-404', synthetic, 'SIS-6', uuid(6)])
    const refused = await cli(['links', 'add', '--org', acme, '--file', badList, '--json'], { databaseUrl })
    expect(refused.status).toBe(1)
    expect(jsonOf(refused).error.problems.map((p: { line: number }) => p.line)).toEqual([3, 4, 6])

    const club = write('reading-club.csv', ['student', uuid(5), 'SIS-6'])
    const listShared = await cli(['links', 'add', '--org', 'Acme Learning', '--file', club, '--json'], { databaseUrl })
    expect(listShared.status).toBe(0)
    expect(jsonOf(listShared).share).toMatchObject({ kind: 'list', label: 'reading-club.csv', students: 2, linked: 1 })
    const named = await cli(['links', 'add', '--org', acme, '--file', club, '--label', 'Chess club'], { databaseUrl })
    expect(named.stdout).toMatch(/^shared list "Chess club" with Acme Learning/)
    expect(await linked(databaseUrl, acme)).toEqual([uuid(4), uuid(5), uuid(6)])

    const sandboxed = await cli(['links', 'add', '--org', sandbox, '--file', club, '--json'], { databaseUrl })
    expect([sandboxed.status, jsonOf(sandboxed).error.message]).toEqual([
      1,
      expect.stringMatching(/sandbox organisation/),
    ])
    const usage = await cli(['links', 'add', '--org', acme, '--json'], { databaseUrl })
    expect(usage.status).toBe(2)

    const shares = jsonOf(await cli(['links', 'shares', '--org', acme, '--json'], { databaseUrl }))
    expect(shares.linked).toBe(3)
    expect(
      shares.shares.map((s: { kind: string; label: string; students: number }) => [s.kind, s.label, s.students]),
    ).toEqual(
      expect.arrayContaining([
        ['school', 'Oakwood High', 2],
        ['list', 'reading-club.csv', 2],
        ['list', 'Chess club', 2],
      ]),
    )

    const ended = await cli(
      ['links', 'remove', '--org', acme, '--school', 'Oakwood High', '--yes', '--json', ...ACTOR],
      {
        databaseUrl,
      },
    )
    expect(ended.status).toBe(0)
    expect(jsonOf(ended)).toMatchObject({ released: 2, unlinked: [uuid(4)] })
    expect(await linked(databaseUrl, acme)).toEqual([uuid(5), uuid(6)])
    const removeRows = await auditRows(databaseUrl, 'links.remove')
    expect(removeRows.map((r) => r.target)).toEqual([`share:${jsonOf(ended).shareId}`])
    const noShare = await cli(['links', 'remove', '--org', acme, '--school', 'Oakwood High', '--yes', '--json'], {
      databaseUrl,
    })
    expect([noShare.status, jsonOf(noShare).error.message]).toEqual([1, expect.stringMatching(/no share of school/)])

    // Unlinking one student still works, and takes them out of every share.
    const unlinked = await cli(['links', 'remove', '--org', acme, '--student', uuid(5), '--yes', '--json'], {
      databaseUrl,
    })
    expect(jsonOf(unlinked)).toMatchObject({ studentId: uuid(5), unlinked: true })
    expect(await linked(databaseUrl, acme)).toEqual([uuid(6)])
    const text = await cli(['links', 'shares', '--org', 'Acme Learning'], { databaseUrl })
    expect(text.stdout).toMatch(/^Acme Learning \(.*\): 1 student linked/)
    expect(text.stdout).toMatch(/school\s+Oakwood High\s+0\s+\S+\s+\d{4}-/)
  }, 120_000)

  it('holds the links of an import in one list share per organisation, named after the file', async () => {
    const databaseUrl = newDatabaseUrl()
    const { acme } = await arrange(databaseUrl)
    const beta = await withStorage(databaseUrl, async ({ db }) => (await createOrganisation(db, 'Beta Tutors', NOW)).id)
    const file = write('spring-links.csv', [
      'studentId,organisation',
      `${uuid(1)},Acme Learning`,
      `${uuid(2)},Acme Learning`,
      `${uuid(2)},${beta}`,
    ])
    expect((await cli(['links', 'import', file, ...ACTOR], { databaseUrl })).status).toBe(0)
    for (const [organisation, students] of [
      [acme, 2],
      [beta, 1],
    ] as const) {
      const { shares } = jsonOf(await cli(['links', 'shares', '--org', organisation, '--json'], { databaseUrl }))
      expect(shares).toEqual([
        expect.objectContaining({
          kind: 'list',
          label: 'spring-links.csv',
          students,
          createdBy: 'cli:Robin at the district office',
        }),
      ])
    }
    expect(await linked(databaseUrl, beta)).toEqual([uuid(2)])
  }, 120_000)
})

describe.each(ENGINES)('ending shares on %s', (_engine, databaseUrlOf) => {
  /** Acme shares Hillside Primary, which students 1 and 2 attend; student 2 is also on Acme's reading-club list. */
  async function arrangeShared(): Promise<string> {
    const databaseUrl = databaseUrlOf()
    await arrange(databaseUrl)
    const members = write('members.csv', [
      'studentId,school',
      `${uuid(1)},Hillside Primary`,
      `${uuid(2)},Hillside Primary`,
    ])
    const club = write('club.csv', ['student', uuid(2)])
    for (const argv of [
      ['schools', 'add', '--name', 'Hillside Primary'],
      ['schools', 'members', 'import', members],
      ['links', 'add', '--org', 'Acme Learning', '--school', 'Hillside Primary'],
      ['links', 'add', '--org', 'Acme Learning', '--file', club],
    ]) {
      const result = await cli(argv, { databaseUrl })
      expect(result.status, `${argv.join(' ')}: ${result.stderr}`).toBe(0)
    }
    return databaseUrl
  }

  const state = (databaseUrl: string) =>
    withStorage(databaseUrl, async ({ db }) => ({
      attending: (await db.selectFrom('student_schools').select('student_id').orderBy('student_id').execute()).map(
        (row) => row.student_id,
      ),
      linked: await db.selectFrom('student_organisations').select('student_id').orderBy('student_id').execute(),
      shares: await db.selectFrom('shares').select(['label', 'ended_at']).orderBy('label').execute(),
      notices: (await db.selectFrom('student_changes').select('seq').where('kind', '=', 'student_unlinked').execute())
        .length,
    }))

  it('asks before ending a school share, naming what it holds and what it unlinks', async () => {
    await expectConfirmation({
      argv: ['links', 'remove', '--org', 'Acme Learning', '--school', 'Hillside Primary'],
      arrange: arrangeShared,
      state,
      preview:
        /end the share of school Hillside Primary with Acme Learning .*: it holds 2 students\.\n1 student no other share holds: unlinked/,
    })
  }, 180_000)

  it('asks before a members file records students leaving a shared school', async () => {
    const leavers = write('leavers.csv', [
      'studentId,school,status',
      `${uuid(1)},Hillside Primary,left`,
      `${uuid(2)},Hillside Primary,left`,
      `${uuid(3)},Hillside Primary,left`,
    ])
    await expectConfirmation({
      argv: ['schools', 'members', 'import', leavers],
      arrange: arrangeShared,
      state,
      preview:
        /2 rows record students leaving a school they attend \(1 other left row names a school the student does not attend: nothing to do\)\n1 link to partners end: Acme Learning \(.*\) 1;/,
    })
  }, 180_000)
})

async function listSchools(databaseUrl: string): Promise<[string, number, number][]> {
  const { schools } = jsonOf(await cli(['schools', 'list', '--json'], { databaseUrl }))
  return schools.map((s: { id: string; students: number; shares: number }) => [s.id, s.students, s.shares])
}
