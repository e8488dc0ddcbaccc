/**
 * `curriculum disclosures report` and `disclosures export` as an operator runs them: a student's
 * report on standard output or in a new file of its owner's only, CSV or JSON, audited before it
 * is written; a district's export streamed with memory that does not grow with the log, on
 * SQLite and, when it answers, PostgreSQL.
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { type Kysely, sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { parseCsv } from '../../src/imports/csv.js'
import { createApiKey, createOrganisation } from '../../src/storage/access-repository.js'
import { recordAgreement } from '../../src/cases/agreement-record.js'
import { recordDisclosure, sealSegments } from '../../src/storage/disclosure-log.js'
import { upsertStudents } from '../../src/storage/student-import-repository.js'
import type { Database } from '../../src/storage/tables.js'
import { createTestStorage, freshDatabaseUrl } from '../helper.js'
import { CLI, cli, jsonOf, newDatabaseUrl, tempDir, useCliHarness, withStorage } from './cli-harness.js'

const ADA = '11111111-1111-4111-8111-111111111111'
const BEN = '22222222-2222-4222-8222-222222222222'
const T0 = Date.parse('2026-03-01T00:00:00.000Z')
const DAY = 86_400_000
const PEAK_RSS = path.resolve(import.meta.dirname, '../support/report-peak-rss.cjs')

useCliHarness()

/** Acme (agreement DSA-1 from T0) with a read key; Ada disclosed three times, Ben once. */
function seed(databaseUrl: string) {
  return withStorage(databaseUrl, ({ db }) => seedIn(db))
}

async function seedIn(db: Kysely<Database>) {
  {
    const acme = await createOrganisation(db, 'Acme Learning', T0 - DAY)
    await recordAgreement(
      db,
      {
        organisationId: acme.id,
        signedAt: T0,
        expiresAt: null,
        documentRef: 'DSA-1',
        purpose: 'Reading practice',
        dataCategories: ['first_name', 'tier'],
        dispositionDays: 14,
      },
      T0,
    )
    const key = await createApiKey(db, { organisationId: acme.id, name: 'sync', scopes: [], expiresAt: null }, T0)
    await upsertStudents(db, [{ id: ADA, firstName: 'Ada', tier: 'explorer' }], T0)
    const context = (days: number) => ({
      at: T0 + days * DAY,
      requestId: `req-${days}`,
      keyId: key.row.id,
      organisationId: acme.id,
    })
    await recordDisclosure(db, context(-1), ADA, 'progress.read', 'denied_agreement')
    await recordDisclosure(db, context(1), ADA, 'progress.read', 'disclosed')
    await recordDisclosure(db, context(2), BEN, 'progress.read', 'disclosed')
    await recordDisclosure(db, context(3), ADA, 'enroll', 'updated')
    return { acme: acme.id, key: key.row }
  }
}

describe('curriculum disclosures report', () => {
  it('writes a student report as CSV or JSON, to standard output or a new file, and audits it first', async () => {
    const databaseUrl = newDatabaseUrl()
    const { acme, key } = await seed(databaseUrl)
    const dir = tempDir()
    const run = (...args: string[]) => cli(['disclosures', 'report', '--student', ADA, ...args], { databaseUrl })

    const csv = await run()
    expect(csv.status, csv.stderr).toBe(0)
    const records = parseCsv(csv.stdout)
    const header = records[0]!.fields
    const column = (name: string) => records.slice(1).map((record) => record.fields[header.indexOf(name)])
    expect(column('at')).toEqual(['2026-02-28T00:00:00.000Z', '2026-03-02T00:00:00.000Z', '2026-03-04T00:00:00.000Z'])
    expect(column('action')).toEqual(['progress.read', 'progress.read', 'enroll'])
    expect(column('data')).toEqual(['', 'first_name tier progress', 'tier'])
    expect(column('organisation')).toEqual(['Acme Learning', 'Acme Learning', 'Acme Learning'])
    expect(column('key_prefix')).toEqual([key.display_prefix, key.display_prefix, key.display_prefix])
    expect(column('agreement_document')).toEqual(['', 'DSA-1', 'DSA-1'])
    expect(column('agreement_purpose')).toEqual(['', 'Reading practice', 'Reading practice'])
    expect(column('agreement_data')).toEqual(['', 'first_name tier', 'first_name tier'])
    expect(column('disposition_days')).toEqual(['', '14', '14'])

    const json = JSON.parse((await run('--format', 'json')).stdout)
    expect(json).toMatchObject({ report: 'disclosures', student: { id: ADA, firstName: 'Ada' }, rows: 3 })
    expect(json.disclosures[1]).toMatchObject({
      studentId: ADA,
      organisation: { id: acme, name: 'Acme Learning' },
      by: { kind: 'key', keyId: key.id, name: 'sync' },
      agreement: { documentRef: 'DSA-1', purpose: 'Reading practice', dataCategories: ['first_name', 'tier'] },
    })

    const file = path.join(dir, 'ada.json')
    const summary = jsonOf(await run('--format', 'json', '--output', file, '--json'))
    expect(summary).toEqual({
      ok: true,
      file,
      format: 'json',
      rows: 3,
      student: { id: ADA, firstName: 'Ada', externalId: null },
    })
    expect(JSON.parse(fs.readFileSync(file, 'utf8')).disclosures).toEqual(json.disclosures)
    expect(fs.statSync(file).mode & 0o777).toBe(0o600)
    const again = await run('--output', file)
    expect(again.status).toBe(1)
    expect(again.stderr).toBe(`error: ${file} already exists: choose a new file (a report never replaces one)\n`)
    const text = await run('--output', path.join(dir, 'ada.csv'))
    expect(text.stdout).toBe(`wrote 3 disclosure records of student ${ADA} to ${path.join(dir, 'ada.csv')}\n`)

    // With the report on standard output, --json has nowhere to go.
    const both = await run('--json')
    expect(both.status).toBe(2)
    expect(jsonOf(both).error.message).toMatch(/--json prints a summary of a report written with --output/)

    const audits = await withStorage(databaseUrl, ({ db }) =>
      db.selectFrom('audit_log').select(['action', 'target', 'detail']).orderBy('id').execute(),
    )
    // Four reports went out (two on standard output, two to files); the refused ones wrote nothing.
    expect(audits.map((row) => [row.action, row.target, JSON.parse(row.detail).changed.output])).toEqual([
      ['disclosures.report', `student:${ADA}`, 'stdout'],
      ['disclosures.report', `student:${ADA}`, 'stdout'],
      ['disclosures.report', `student:${ADA}`, file],
      ['disclosures.report', `student:${ADA}`, path.join(dir, 'ada.csv')],
    ])
  })

  it('exports a date range, of one organisation or all, and refuses a range that ends before it starts', async () => {
    const databaseUrl = newDatabaseUrl()
    await seed(databaseUrl)
    const run = (...args: string[]) => cli(['disclosures', 'export', ...args], { databaseUrl })
    const range = JSON.parse((await run('--since', '2026-03-01', '--until', '2026-03-04', '--format', 'json')).stdout)
    expect(range.range).toEqual({
      since: '2026-03-01T00:00:00.000Z',
      until: '2026-03-04T00:00:00.000Z',
      organisation: null,
      school: null,
    })
    expect(range.disclosures.map((row: { studentId: string }) => row.studentId)).toEqual([ADA, BEN])
    const org = await run('--since', '2026-01-01', '--until', '2027-01-01', '--org', 'Acme Learning')
    expect(parseCsv(org.stdout)).toHaveLength(5)
    const backwards = await run('--since', '2026-03-04', '--until', '2026-03-01', '--json')
    expect(backwards.status).toBe(2)
    expect(jsonOf(backwards).error.message).toBe('--until must be after --since')
  })

  it("finds a student by the district's id, and exports the disclosures of a school's students", async () => {
    const databaseUrl = newDatabaseUrl()
    await seed(databaseUrl)
    const LINCOLN = '33333333-3333-4333-8333-333333333333'
    await withStorage(databaseUrl, async ({ db }) => {
      const at = new Date(T0).toISOString()
      await db.updateTable('students').set({ external_id: 'stu-20417' }).where('id', '=', ADA).execute()
      await db
        .insertInto('schools')
        .values({ id: LINCOLN, name: 'Lincoln Elementary', external_id: 'org-7', identifier: null, created_at: at })
        .execute()
      await db.insertInto('student_schools').values({ student_id: ADA, school_id: LINCOLN, created_at: at }).execute()
    })
    const report = (...args: string[]) => cli(['disclosures', 'report', ...args], { databaseUrl })

    const byExternal = JSON.parse((await report('--external-id', 'stu-20417', '--format', 'json')).stdout)
    expect(byExternal.student).toEqual({ id: ADA, firstName: 'Ada', externalId: 'stu-20417' })
    expect(byExternal.rows).toBe(3)
    expect(byExternal.disclosures[0].studentExternalId).toBe('stu-20417')
    const csv = parseCsv((await report('--external-id', 'stu-20417')).stdout)
    expect(csv[1]!.fields[csv[0]!.fields.indexOf('student_external_id')]).toBe('stu-20417')

    const unknown = await report('--external-id', 'stu-0')
    expect(unknown.status).toBe(1)
    expect(unknown.stderr).toMatch(/^error: no stored student has the external id stu-0; an erased student/)
    for (const args of [[], ['--student', ADA, '--external-id', 'stu-20417']]) {
      const refused = await report(...args, '--json')
      expect(refused.status).toBe(2)
      expect(jsonOf(refused).error.message).toBe(
        'name the student with exactly one of --student <uuid> and --external-id <id>',
      )
    }

    const exported = (school: string) =>
      cli(
        [
          'disclosures',
          'export',
          '--since',
          '2026-01-01',
          '--until',
          '2027-01-01',
          '--school',
          school,
          '--format',
          'json',
        ],
        {
          databaseUrl,
        },
      )
    for (const named of [LINCOLN, 'org-7', 'Lincoln Elementary']) {
      const school = JSON.parse((await exported(named)).stdout)
      expect(school.range.school).toEqual({ id: LINCOLN, name: 'Lincoln Elementary' })
      // Ben attends no school: only Ada's three records.
      expect(school.disclosures.map((row: { studentId: string }) => row.studentId)).toEqual([ADA, ADA, ADA])
    }
    const nowhere = await exported('Springfield')
    expect(nowhere.status).toBe(1)
    expect(nowhere.stderr).toMatch(/no school "Springfield"/)

    const audits = await withStorage(databaseUrl, ({ db }) =>
      db.selectFrom('audit_log').select(['target', 'detail']).orderBy('id').execute(),
    )
    // The report found by the district's id is recorded under the student's own id too.
    expect(audits[0]!.target).toBe(`student:${ADA}`)
    expect(JSON.parse(audits[0]!.detail).changed).toMatchObject({ student: ADA, externalId: 'stu-20417' })
    expect(audits.at(-1)!.target).toBe('disclosures')
  })
})

/** Rows in the memory test: enough that a report held whole would be kept far past the bound. */
const ROWS = 150_000

const ENGINES: [string, () => string][] = [
  ['SQLite', () => newDatabaseUrl()],
  ...(process.env.TEST_POSTGRES_URL
    ? [['PostgreSQL', () => freshDatabaseUrl(process.env.TEST_POSTGRES_URL)] as [string, () => string]]
    : []),
]

describe.each(ENGINES)('curriculum disclosures export on %s', (engine, databaseUrlOf) => {
  it(`streams ${ROWS.toLocaleString('en-US')} rows with memory that does not grow with them`, async () => {
    const databaseUrl = databaseUrlOf()
    // Its close drops a PostgreSQL test schema.
    const storage = await createTestStorage({ url: databaseUrl, catalog: false })
    try {
      const { acme, key } = await seedIn(storage.db)
      {
        // One statement on either engine: 5,000 students, a feed response every 5,000 rows.
        await sql`with recursive n(i) as (select 0 union all select i + 1 from n where i < ${ROWS - 1})
          insert into disclosures (at, request_id, key_id, organisation_id, student_id, action, outcome)
          select ${new Date(T0).toISOString()}, 'feed-' || (i / 5000), ${key.id}, ${acme},
            '00000000-0000-4000-8000-' || (100000000000 + i % 5000), 'progress.changes', 'disclosed'
          from n`.execute(storage.db)
        // The first segments sealed, the rest an unsealed tail: the export reads both.
        let sealed = 0
        await sealSegments(storage.db, {
          segmentRows: 4096,
          horizonMs: 0,
          now: T0 + 365 * DAY,
          write: (work) => storage.writes.transaction(work),
          pause: async () => ++sealed < 3 * 4,
        })
      }
      const file = path.join(tempDir(), 'district.csv')
      const child = spawn(
        process.execPath,
        [
          '--require',
          PEAK_RSS,
          CLI,
          ...['disclosures', 'export', '--since', '2026-01-01', '--until', '2027-01-01', '--output', file, '--json'],
        ],
        { env: { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: databaseUrl }, stdio: 'pipe' },
      )
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (chunk) => {
        stdout += chunk
      })
      child.stderr.on('data', (chunk) => {
        stderr += chunk
      })
      const status = await new Promise<number | null>((resolve) => child.on('close', resolve))
      expect(status, stderr).toBe(0)
      expect(jsonOf({ status: 0, stdout, stderr })).toMatchObject({ ok: true, rows: ROWS + 4 })
      const size = fs.statSync(file).size
      const [, peakKiB, liveKiB] = (/peak-rss-kib=(\d+) live-heap-kib=(\d+)/.exec(stderr) ?? []).map(Number)
      const memory = `${(size / 2 ** 20).toFixed(0)} MB written; peak RSS ${peakKiB} KiB, largest heap kept through a full collection ${liveKiB} KiB`
      console.info(`[disclosures export, ${engine}] ${memory}`)
      expect(liveKiB, memory).toBeGreaterThan(0)
      // Held whole, the report would keep at least its text (the file's size) through a collection.
      expect(size / 2 ** 20, memory).toBeGreaterThan(48)
      expect(liveKiB! / 1024, memory).toBeLessThan(24)
      // The rest is V8 letting the heap grow to its first limit before a full collection, whatever
      // the rows (docs/performance.md, "Report memory").
      expect(peakKiB! / 1024, memory).toBeLessThan(320)
    } finally {
      await storage.close()
    }
  }, 180_000)
})
