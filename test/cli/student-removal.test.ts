/**
 * `curriculum links remove` and `curriculum students erase`, run as the operator runs them: what
 * they change, what they refuse (a sandbox, an unknown id, a bad file), that both show what they
 * would end and ask first (--yes without a terminal; an erasure without it shows its preview and
 * exits 0), that a file is erased whole with an audit row per student, and that no output of
 * theirs names the child.
 */
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { createSandbox } from '../../src/cases/sandbox.js'
import { createOrganisation } from '../../src/storage/access-repository.js'
import { sandboxStudents } from '../../src/storage/sandbox-repository.js'
import { linkStudents, upsertProgress, upsertStudents } from '../../src/storage/student-import-repository.js'
import { loadSampleCatalog } from '../helper.js'
import { replaceCatalog } from '../../src/storage/catalog-repository.js'
import { cli, ENGINES, jsonOf, newDatabaseUrl, tempDir, useCliHarness, withStorage } from './cli-harness.js'
import { expectConfirmation } from './confirmation-checks.js'
import { rowCount } from '../support/row-count.js'

useCliHarness()

const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`
const NAME = 'Quillanmarker'
const NOW = Date.parse('2026-03-02T09:00:00.000Z')

/** Two organisations, students 1..n (student 1 named NAME) linked to both, with one progress entry each. */
async function arrange(
  databaseUrl: string,
  n: number,
): Promise<{ acme: string; beta: string; sandboxStudent: string }> {
  return withStorage(databaseUrl, async ({ db }) => {
    await replaceCatalog(db, loadSampleCatalog())
    const acme = await createOrganisation(db, 'Acme Learning', NOW)
    const beta = await createOrganisation(db, 'Beta Tutors', NOW)
    const ids = Array.from({ length: n }, (_, i) => uuid(i + 1))
    await upsertStudents(
      db,
      ids.map((id, i) => ({ id, firstName: i === 0 ? NAME : `S${i}`, tier: 'explorer' as const })),
      NOW,
    )
    await linkStudents(
      db,
      ids.flatMap((studentId) => [acme, beta].map((o) => ({ studentId, organisationId: o.id }))),
      NOW,
    )
    await upsertProgress(
      db,
      ids.map((studentId) => ({
        studentId,
        lessonSlug: 'explorer/e1-robots-follow-instructions',
        status: 'completed' as const,
        xp: 10,
        timeSeconds: 60,
        startedAt: '2026-03-01T10:00:00.000Z',
        completedAt: '2026-03-01T10:05:00.000Z',
      })),
      NOW,
    )
    const sandbox = await createSandbox(db, 'cli@example.org', NOW)
    const [synthetic] = await sandboxStudents(db, sandbox.id)
    return { acme: acme.id, beta: beta.id, sandboxStudent: synthetic!.id }
  })
}

const counts = (databaseUrl: string) =>
  withStorage(databaseUrl, async ({ db }) => {
    const n = (table: 'students' | 'student_organisations' | 'progress' | 'audit_log') => rowCount(db, table)
    return { students: await n('students'), links: await n('student_organisations'), audit: await n('audit_log') }
  })

describe('links remove', () => {
  it('unlinks a student from one organisation, says so, and refuses a sandbox or an unknown organisation', async () => {
    const databaseUrl = newDatabaseUrl()
    const { acme } = await arrange(databaseUrl, 2)
    const removed = await cli(['links', 'remove', '--org', 'Acme Learning', '--student', uuid(1), '--yes', '--json'], {
      databaseUrl,
    })
    expect(removed.status, removed.stderr).toBe(0)
    expect(jsonOf(removed)).toEqual({
      ok: true,
      organisation: { id: acme, name: 'Acme Learning' },
      studentId: uuid(1),
      unlinked: true,
      webhooks: 0,
    })
    const again = await cli(['links', 'remove', '--org', acme, '--student', uuid(1)], { databaseUrl })
    expect(again.status).toBe(0)
    expect(again.stdout).toMatch(/was not linked to Acme Learning.*nothing changed/)
    const [sandbox, unknown, badId] = await Promise.all([
      cli(['links', 'remove', '--org', 'Sandbox: cli@example.org', '--student', uuid(2), '--json'], { databaseUrl }),
      cli(['links', 'remove', '--org', 'Nobody Ltd', '--student', uuid(2), '--json'], { databaseUrl }),
      cli(['links', 'remove', '--org', 'Acme Learning', '--student', 'ada', '--json'], { databaseUrl }),
    ])
    expect([sandbox.status, unknown.status, badId.status]).toEqual([1, 1, 2])
    expect(jsonOf(sandbox).error.message).toMatch(/sandbox/)
    expect(jsonOf(unknown).error.message).toMatch(/no organisation "Nobody Ltd"/)
    const links = await withStorage(databaseUrl, ({ db }) =>
      db
        .selectFrom('student_organisations')
        .select(['student_id', 'organisation_id'])
        .where('student_id', 'in', [uuid(1), uuid(2)])
        .execute(),
    )
    expect(links.map((link) => [link.student_id, link.organisation_id === acme ? 'acme' : 'beta']).sort()).toEqual([
      [uuid(1), 'beta'],
      [uuid(2), 'acme'],
      [uuid(2), 'beta'],
    ])
  })
})

describe('students erase', () => {
  it('shows what it would erase without --yes, then erases one student; refuses a sandbox student and an id nobody has', async () => {
    const databaseUrl = newDatabaseUrl()
    const { acme, beta, sandboxStudent } = await arrange(databaseUrl, 2)
    const before = await counts(databaseUrl)
    const asked = await cli(['students', 'erase', uuid(1)], { databaseUrl })
    expect(asked.status, asked.stderr).toBe(0)
    const lines = asked.stdout.trim().split('\n')
    expect(lines[1]).toMatch(/^STUDENT +LINKS +PROGRESS +CHANGES +LINKED TO$/)
    expect(lines[2]).toMatch(
      new RegExp(`^${uuid(1)} +2 +1 +2 +Acme Learning \\(${acme}\\), Beta Tutors \\(${beta}\\)$`),
    )
    expect(lines.at(-1)).toBe(
      'nothing was written: to erase 1 student, run it again with --yes, or on a terminal to be asked',
    )
    expect(await counts(databaseUrl)).toEqual(before)

    const erased = await cli(['students', 'erase', uuid(1), '--yes', '--json'], { databaseUrl })
    expect(erased.status, erased.stderr).toBe(0)
    expect(jsonOf(erased)).toMatchObject({
      ok: true,
      studentId: uuid(1),
      erased: 1,
      missing: [],
      links: 2,
      progress: 1,
      changes: 2,
      webhooks: 0,
      log: 'truncated',
    })
    expect(await counts(databaseUrl)).toEqual({
      students: before.students - 1,
      links: before.links - 2,
      audit: before.audit + 1,
    })
    for (const output of [asked.stdout, asked.stderr, erased.stdout, erased.stderr]) expect(output).not.toContain(NAME)

    const [again, sandbox, notAnId] = await Promise.all([
      cli(['students', 'erase', uuid(1), '--yes', '--json'], { databaseUrl }),
      cli(['students', 'erase', sandboxStudent, '--yes', '--json'], { databaseUrl }),
      cli(['students', 'erase', 'maya', '--yes', '--json'], { databaseUrl }),
    ])
    expect([again.status, sandbox.status, notAnId.status]).toEqual([1, 1, 2])
    expect(jsonOf(again).error.message).toMatch(/no student .* erased already/)
    expect(jsonOf(sandbox).error.message).toMatch(/sandbox \(synthetic\) student.*regenerated/)
  })

  it('erases every student of a file in batches, one audit row each; a bad file or a sandbox id erases nothing', async () => {
    const databaseUrl = newDatabaseUrl()
    const { sandboxStudent } = await arrange(databaseUrl, 120)
    const dir = tempDir()
    const write = (name: string, lines: string[]) => {
      const file = path.join(dir, name)
      fs.writeFileSync(file, `${lines.join('\n')}\n`)
      return file
    }
    const leaving = Array.from({ length: 100 }, (_, i) => uuid(i + 1))
    const bad = write('bad.csv', ['id', uuid(1), 'not-an-id', uuid(2)])
    const withSandbox = write('sandbox.csv', ['id', uuid(1), sandboxStudent])
    const good = write('leaving.csv', ['id', ...leaving, leaving[0]!, uuid(999)])
    const before = await counts(databaseUrl)
    const [badRun, sandboxRun, unconfirmed] = await Promise.all([
      cli(['students', 'erase', '--file', bad, '--yes', '--json'], { databaseUrl }),
      cli(['students', 'erase', '--file', withSandbox, '--yes', '--json'], { databaseUrl }),
      cli(['students', 'erase', '--file', good, '--json'], { databaseUrl }),
    ])
    expect([badRun.status, sandboxRun.status, unconfirmed.status]).toEqual([1, 1, 0])
    expect(jsonOf(badRun).error.problems).toEqual([
      { file: bad, line: 3, field: 'id', message: expect.stringMatching(/must be a student id.*"not-an-id"/) },
    ])
    expect(jsonOf(sandboxRun).error.message).toMatch(/sandbox/)
    const preview = jsonOf(unconfirmed)
    expect(preview).toMatchObject({ ok: true, file: good, written: false, preview: { missing: [uuid(999)] } })
    expect(preview.preview.students).toHaveLength(100)
    expect(preview.preview.students[0]).toEqual({
      id: uuid(1),
      organisations: [
        expect.objectContaining({ name: 'Acme Learning' }),
        expect.objectContaining({ name: 'Beta Tutors' }),
      ],
      progress: 1,
      changes: 2,
    })
    expect(await counts(databaseUrl)).toEqual(before)

    const run = await cli(['students', 'erase', '--file', good, '--yes', '--json'], { databaseUrl })
    expect(run.status, run.stderr).toBe(0)
    const summary = jsonOf(run)
    expect(summary).toMatchObject({
      ok: true,
      file: good,
      erased: 100,
      missing: [uuid(999)],
      links: 200,
      progress: 100,
    })
    expect(summary.batches).toBeGreaterThan(1)
    expect(await counts(databaseUrl)).toEqual({
      students: before.students - 100,
      links: before.links - 200,
      audit: before.audit + 100,
    })
    const audit = await withStorage(databaseUrl, ({ db }) =>
      db.selectFrom('audit_log').selectAll().where('action', '=', 'students.erase').execute(),
    )
    expect(audit.map((row) => row.target).sort()).toEqual(leaving.map((id) => `student:${id}`).sort())
    expect(JSON.parse(audit[0]!.detail).changed.organisations).toHaveLength(2)
    expect(run.stdout + run.stderr).not.toContain(NAME)

    // Run again (as after a run that stopped): nothing left to erase, every id missing.
    const rerun = jsonOf(await cli(['students', 'erase', '--file', good, '--yes', '--json'], { databaseUrl }))
    expect(rerun).toMatchObject({ erased: 0, links: 0 })
    expect(rerun.missing).toHaveLength(101)
  })
})

describe.each(ENGINES)('asking before unlinking and erasing on %s', (_engine, databaseUrlOf) => {
  const arranged = async () => {
    const databaseUrl = databaseUrlOf()
    await arrange(databaseUrl, 3)
    return databaseUrl
  }

  it('links remove --student shows the link it ends and asks', async () => {
    await expectConfirmation({
      argv: ['links', 'remove', '--org', 'Acme Learning', '--student', uuid(2)],
      arrange: arranged,
      state: counts,
      preview: new RegExp(
        `^unlink student ${uuid(2)} from Acme Learning \\(.*\\): its keys get 404 for the student at once`,
      ),
    })
  }, 180_000)

  it('students erase shows what it would erase, student by student, and asks', async () => {
    await expectConfirmation({
      argv: ['students', 'erase', uuid(2)],
      arrange: arranged,
      state: counts,
      preview: new RegExp(`would erase 1 student for good.*\\n.*\\n${uuid(2)} +2 +1 +2 +Acme Learning`),
      unconfirmed: 0,
    })
  }, 180_000)

  it('students erase --file shows every student of the file and asks', async () => {
    const file = path.join(tempDir(), 'leaving.csv')
    fs.writeFileSync(file, `id\n${uuid(1)}\n${uuid(3)}\n${uuid(404)}\n`)
    await expectConfirmation({
      argv: ['students', 'erase', '--file', file],
      arrange: arranged,
      state: counts,
      preview: new RegExp(
        `would erase 2 students for good[\\s\\S]*\\n${uuid(1)} +2 +1 +2 [^\\n]*\\n${uuid(3)} +2 +1 +2 [\\s\\S]*` +
          `in all: 4 links, 2 progress entries, 4 change-log rows\\n1 id of no student .*: ${uuid(404)}`,
      ),
      unconfirmed: 0,
    })
  }, 180_000)
})
