/**
 * The disclosure report's reads, on both engines: every matching row once, oldest first, in
 * batches no larger than asked, whether its segment is sealed or not; each row with its
 * organisation, what made the request (key, dashboard account or webhook endpoint), the data
 * it handed over, and the agreement in force at its time; and the text both formats make of it.
 */
import { describe, expect, it } from 'vitest'
import { parseCsv } from '../../src/imports/csv.js'
import { DISCLOSURE_ACTIONS, DISCLOSURE_OUTCOMES } from '../../src/domain/disclosure.js'
import { reportChunks } from '../../src/cases/disclosure-report.js'
import { createApiKey, createOrganisation } from '../../src/storage/access-repository.js'
import { endAgreements } from '../../src/cases/agreement-end.js'
import { recordAgreement } from '../../src/cases/agreement-record.js'
import { createAccount } from '../../src/storage/account-repository.js'
import type { Storage } from '../../src/storage/connection.js'
import { type BatchFilter, disclosureBatches } from '../../src/storage/disclosure-batch-repository.js'
import { recordDisclosure, sealSegments } from '../../src/storage/disclosure-log.js'
import { describedDisclosures } from '../../src/storage/disclosure-report-repository.js'
import { eraseStudents } from '../../src/cases/erasure.js'
import type { DisclosureRow } from '../../src/storage/tables.js'
import { createEndpoint } from '../../src/storage/webhook-endpoint-repository.js'
import { createTestStorage } from '../helper.js'
import { perTest } from '../support/built.js'

const T0 = Date.parse('2026-03-01T00:00:00.000Z')
const DAY = 86_400_000
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`
const STUDENTS = [1, 2, 3].map((n) => uuid(100 + n))
const ORGS = [1, 2].map((n) => uuid(200 + n))
const SCHOOL = uuid(400)
/**
 * The school's students: the filter by school reads attendance as it is, not as it was, except
 * that a student erased (STUDENTS[2], below) keeps the schools it attended then.
 */
const SCHOOL_STUDENTS = [STUDENTS[0]!, STUDENTS[2]!]

async function enrolInSchool(storage: Storage): Promise<void> {
  const at = new Date(T0).toISOString()
  await storage.db
    .insertInto('students')
    .values(STUDENTS.map((id) => ({ id, first_name: 'Ada', tier: 'explorer', tier_updated_at: at, created_at: at })))
    .execute()
  await storage.db
    .insertInto('schools')
    .values({ id: SCHOOL, name: 'Lincoln', external_id: null, identifier: null, created_at: at })
    .execute()
  await storage.db
    .insertInto('student_schools')
    .values(SCHOOL_STUDENTS.map((id) => ({ student_id: id, school_id: SCHOOL, created_at: at })))
    .execute()
}

async function collect(storage: Storage, filter: BatchFilter, batchRows: number): Promise<number[]> {
  const ids: number[] = []
  for await (const rows of disclosureBatches(storage.db, filter, batchRows)) {
    expect(rows.length).toBeGreaterThan(0)
    expect(rows.length).toBeLessThanOrEqual(batchRows)
    ids.push(...rows.map((row) => row.id))
  }
  return ids
}

function expected(all: DisclosureRow[], filter: BatchFilter): number[] {
  return all
    .filter(
      (row) =>
        (filter.studentId === undefined || row.student_id === filter.studentId) &&
        (filter.organisationId === undefined || row.organisation_id === filter.organisationId) &&
        (filter.schoolId === undefined || (filter.schoolId === SCHOOL && SCHOOL_STUDENTS.includes(row.student_id))) &&
        (filter.since === undefined || Date.parse(row.at) >= filter.since) &&
        (filter.until === undefined || Date.parse(row.at) < filter.until) &&
        (filter.afterId === undefined || Number(row.id) > filter.afterId),
    )
    .map((row) => Number(row.id))
    .sort((a, b) => a - b)
}

describe('disclosure batches', () => {
  const storage = perTest(() => createTestStorage({ catalog: false }))

  it('reads every matching row once, oldest first, before, during and after sealing, erased students too', async () => {
    for (let i = 0; i < 95; i++) {
      // Not in id order: a request's time is taken before its row is written.
      const at = T0 + i * 3_600_000 - (i % 4) * 5_400_000
      await recordDisclosure(
        storage.db,
        { at, requestId: `req-${i}`, keyId: uuid(300 + (i % 3)), organisationId: ORGS[i % 2]! },
        STUDENTS[i % 3]!,
        DISCLOSURE_ACTIONS[i % DISCLOSURE_ACTIONS.length]!,
        DISCLOSURE_OUTCOMES[i % DISCLOSURE_OUTCOMES.length]!,
      )
    }
    await enrolInSchool(storage)
    // Erased: the one who attended the school is still found by it, the other is not.
    await eraseStudents(storage.db, [STUDENTS[2]!, STUDENTS[1]!], T0 + 200 * 3_600_000)
    const all = await storage.db.selectFrom('disclosures').selectAll().execute()
    const filters: BatchFilter[] = [
      {},
      { studentId: STUDENTS[0] },
      { organisationId: ORGS[1] },
      { since: T0 + 20 * 3_600_000, until: T0 + 70 * 3_600_000 },
      { studentId: STUDENTS[2], since: T0 + 30 * 3_600_000 },
      { organisationId: ORGS[0], until: T0 + 50 * 3_600_000 },
      { afterId: 37 },
      { studentId: STUDENTS[1], afterId: 55 },
      { studentId: uuid(999) },
      { schoolId: SCHOOL },
      { schoolId: SCHOOL, organisationId: ORGS[1], since: T0 + 10 * 3_600_000 },
      { schoolId: uuid(998) },
    ]
    const check = async () => {
      for (const filter of filters)
        for (const batchRows of [1, 7, 1000])
          expect(await collect(storage, filter, batchRows), JSON.stringify({ filter, batchRows })).toEqual(
            expected(all, filter),
          )
    }
    const seal = (upTo: number) =>
      sealSegments(storage.db, {
        segmentRows: 10,
        horizonMs: 0,
        now: T0 + 1000 * DAY,
        write: (work) => storage.writes.transaction(work),
        pause: async () =>
          (await storage.db.selectFrom('disclosure_segments').select('first_id').execute()).length < upTo,
      })
    await check()
    await seal(4)
    await check()
    await seal(100)
    expect((await storage.db.selectFrom('disclosure_segments').select('first_id').execute()).length).toBe(9)
    await check()
  })

  it("describes each row with the student's district id while the student is stored", async () => {
    await enrolInSchool(storage)
    await storage.db.updateTable('students').set({ external_id: 'stu-0001' }).where('id', '=', STUDENTS[0]!).execute()
    for (const [i, student] of [STUDENTS[0]!, STUDENTS[1]!, uuid(999)].entries())
      await recordDisclosure(
        storage.db,
        { at: T0 + i, requestId: `r${i}`, keyId: uuid(300), organisationId: ORGS[0]! },
        student,
        'progress.read',
        'disclosed',
      )
    const described = []
    for await (const rows of describedDisclosures(storage.db, {}, 2)) described.push(...rows)
    expect(described.map((row) => [row.studentId, row.studentExternalId])).toEqual([
      [STUDENTS[0], 'stu-0001'],
      [STUDENTS[1], null],
      [uuid(999), null],
    ])
  })

  it('leaves out rows written after the read began', async () => {
    const write = (i: number) =>
      recordDisclosure(
        storage.db,
        { at: T0 + i, requestId: `r${i}`, keyId: uuid(300), organisationId: ORGS[0]! },
        STUDENTS[0]!,
        'progress.read',
        'disclosed',
      )
    for (let i = 0; i < 5; i++) await write(i)
    const ids: number[] = []
    for await (const rows of disclosureBatches(storage.db, { studentId: STUDENTS[0] }, 2)) {
      ids.push(...rows.map((row) => row.id))
      await write(100 + ids.length)
    }
    expect(ids).toEqual([1, 2, 3, 4, 5])
  })
})

describe('described disclosures', () => {
  const storage = perTest(() => createTestStorage({ catalog: false }))

  it('names the organisation, the key, account or endpoint, the data handed over and the agreement in force then', async () => {
    const { db } = storage
    const acme = await createOrganisation(db, '=HYPERLINK("http://evil.example")', T0 - 100 * DAY)
    const old = await recordAgreement(
      db,
      {
        organisationId: acme.id,
        signedAt: T0 - 90 * DAY,
        expiresAt: T0 + 10 * DAY,
        documentRef: 'DSA-OLD',
        purpose: 'Tier placement',
        dataCategories: ['tier'],
        dispositionDays: 10,
      },
      T0,
    )
    const renewed = await recordAgreement(
      db,
      {
        organisationId: acme.id,
        signedAt: T0 + 5 * DAY,
        expiresAt: null,
        documentRef: 'DSA-NEW',
        purpose: 'Reading practice',
        dispositionDays: 30,
      },
      T0,
    )
    await endAgreements(db, { agreementId: renewed.id }, T0 + 20 * DAY)
    const key = await createApiKey(
      db,
      { organisationId: acme.id, name: '-rm -rf', scopes: ['students:read'], expiresAt: null },
      T0,
    )
    const account = await createAccount(db, { email: 'dana@acme.example', passwordHash: 'x', role: 'partner' }, T0)
    const { endpoint } = await createEndpoint(
      db,
      { organisationId: acme.id, mode: 'live', url: 'https://hooks.acme.example/in', events: ['progress.updated'] },
      T0,
    )
    const student = STUDENTS[0]!
    const record = (days: number, keyId: string, action: (typeof DISCLOSURE_ACTIONS)[number], outcome: string) =>
      recordDisclosure(
        db,
        { at: T0 + days * DAY, requestId: `req-${days}`, keyId, organisationId: acme.id },
        student,
        action,
        outcome as (typeof DISCLOSURE_OUTCOMES)[number],
      )
    await record(-95, key.row.id, 'progress.read', 'denied_agreement')
    await record(1, key.row.id, 'progress.read', 'disclosed')
    await record(7, `dashboard:${account.id}`, 'students.list', 'disclosed')
    // Deliveries whose request ids the log keeps: a progress update, and a notice that carries the id only.
    for (const [days, event] of [
      [12, 'progress.updated'],
      [13, 'student.deleted'],
    ] as const) {
      await db
        .insertInto('webhook_deliveries')
        .values({
          id: `req-${days}`,
          endpoint_id: endpoint.id,
          event_type: event,
          payload: '{}',
          student_id: student,
          created_at: new Date(T0).toISOString(),
          state: 'delivered',
          attempts: 1,
        })
        .execute()
      await record(days, `webhook:${endpoint.id}`, 'webhook', days === 12 ? 'sent_unacknowledged' : 'disclosed')
    }
    await record(15, uuid(999), 'enroll', 'not_found')
    await record(25, key.row.id, 'progress.changes', 'denied_agreement')

    const rows = []
    for await (const batch of describedDisclosures(db, { studentId: student }, 2)) rows.push(...batch)
    expect(rows.map((row) => [row.at.slice(0, 10), row.by, row.data, row.agreement?.documentRef ?? null])).toEqual([
      [
        '2025-11-26',
        { kind: 'key', keyId: key.row.id, name: '-rm -rf', prefix: key.row.display_prefix, mode: 'live' },
        [],
        null,
      ],
      ['2026-03-02', expect.objectContaining({ kind: 'key' }), ['first_name', 'tier', 'progress'], 'DSA-OLD'],
      [
        '2026-03-08',
        { kind: 'dashboard', accountId: account.id, email: 'dana@acme.example' },
        ['first_name', 'tier'],
        'DSA-NEW',
      ],
      [
        '2026-03-13',
        { kind: 'webhook', endpointId: endpoint.id, url: 'https://hooks.acme.example/in', event: 'progress.updated' },
        ['progress'],
        'DSA-NEW',
      ],
      [
        '2026-03-14',
        { kind: 'webhook', endpointId: endpoint.id, url: 'https://hooks.acme.example/in', event: 'student.deleted' },
        [],
        'DSA-NEW',
      ],
      ['2026-03-16', { kind: 'key', keyId: uuid(999), name: null, prefix: null, mode: null }, [], 'DSA-NEW'],
      ['2026-03-26', expect.objectContaining({ kind: 'key' }), [], null],
    ])
    // DSA-OLD shares tiers only: a progress read handed over more than it lists; DSA-NEW lists all.
    expect(rows.map((row) => row.beyondAgreement)).toEqual([[], ['first_name', 'progress'], [], [], [], [], []])
    expect(rows[1]!.organisation).toEqual({ id: acme.id, name: '=HYPERLINK("http://evil.example")' })
    expect(rows[1]!.agreement).toEqual({
      id: old.id,
      documentRef: 'DSA-OLD',
      purpose: 'Tier placement',
      dataCategories: ['tier'],
      signedAt: old.signed_at,
      expiresAt: old.expires_at,
      endedAt: null,
      dispositionDays: 10,
      deleteBy: '2026-03-21T00:00:00.000Z',
    })
    expect(rows[2]!.agreement).toMatchObject({
      endedAt: '2026-03-21T00:00:00.000Z',
      deleteBy: '2026-04-20T00:00:00.000Z',
    })

    // The same rows as text: CSV cells a spreadsheet would run are neutralised; JSON parses whole.
    const text = async (format: 'csv' | 'json') => {
      let out = ''
      const tally = { rows: 0 }
      const request = {
        subject: { kind: 'student' as const, student: { id: student, firstName: 'Ada', externalId: null } },
        filter: { studentId: student },
        generatedAt: new Date(T0).toISOString(),
      }
      for await (const chunk of reportChunks(db, request, format, tally, 2)) out += chunk
      expect(tally.rows).toBe(7)
      return out
    }
    const csv = parseCsv(await text('csv'))
    expect(csv).toHaveLength(8)
    const header = csv[0]!.fields
    const cell = (line: number, column: string) => csv[line]!.fields[header.indexOf(column)]
    expect(cell(2, 'organisation')).toBe(`'=HYPERLINK("http://evil.example")`)
    expect(cell(2, 'key_name')).toBe(`'-rm -rf`)
    expect([cell(2, 'agreement_document'), cell(2, 'agreement_purpose'), cell(2, 'delete_by')]).toEqual([
      'DSA-OLD',
      'Tier placement',
      '2026-03-21T00:00:00.000Z',
    ])
    expect([cell(2, 'data'), cell(2, 'beyond_agreement')]).toEqual(['first_name tier progress', 'first_name progress'])
    expect([cell(3, 'via'), cell(3, 'dashboard_account'), cell(4, 'webhook_url'), cell(5, 'webhook_event')]).toEqual([
      'dashboard',
      'dana@acme.example',
      'https://hooks.acme.example/in',
      'student.deleted',
    ])
    const json = JSON.parse(await text('json'))
    expect(json).toMatchObject({ report: 'disclosures', student: { id: student, firstName: 'Ada' }, rows: 7 })
    expect(json.disclosures).toEqual(JSON.parse(JSON.stringify(rows)))
  })

  it('writes a valid document, and a CSV header, when nothing matches', async () => {
    const request = {
      subject: { kind: 'range' as const, since: null, until: null, organisation: null },
      filter: {},
      generatedAt: new Date(T0).toISOString(),
    }
    let json = ''
    for await (const chunk of reportChunks(storage.db, request, 'json')) json += chunk
    expect(JSON.parse(json)).toEqual({
      report: 'disclosures',
      generatedAt: request.generatedAt,
      range: { since: null, until: null, organisation: null },
      disclosures: [],
      rows: 0,
    })
    let csv = ''
    for await (const chunk of reportChunks(storage.db, request, 'csv')) csv += chunk
    expect(parseCsv(csv).map((record) => record.fields[0])).toEqual(['at'])
  })
})
