/**
 * The operator's disclosure report of one student: every record oldest first with who, what and
 * the agreement in force then, that agreement's terms, 200 records a page, and CSV and JSON
 * downloads that are audited; reached from the disclosure log.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { parseCsv } from '../../src/imports/csv.js'
import { createAccount } from '../../src/storage/account-repository.js'
import { recordDisclosure } from '../../src/storage/disclosure-log.js'
import { buildTestApp, STUDENTS } from '../helper.js'
import { type DashboardClient, signedInOperator } from './dashboard-client.js'
import { perSuite } from '../support/built.js'

const DAY = 86_400_000

describe('the student disclosure report page', () => {
  const t = perSuite(() => buildTestApp())
  let operator: DashboardClient
  const report = `/dashboard/operator/students/${STUDENTS.ada}/disclosures`

  beforeAll(async () => {
    operator = await signedInOperator(t, '192.0.2.5')
    const { db } = t.storage
    const dana = await createAccount(
      db,
      { email: 'dana@acme.example', passwordHash: 'x', role: 'partner' },
      t.clock.now(),
    )
    const acme = t.fixtures.orgs.acme
    const record = (days: number, keyId: string, action: 'progress.read' | 'students.list', outcome: 'disclosed') =>
      recordDisclosure(
        db,
        { at: t.clock.now() + days * DAY, requestId: `req-${days}`, keyId, organisationId: acme },
        STUDENTS.ada,
        action,
        outcome,
      )
    // Acme's agreement was signed 30 days before now: the first record predates it.
    await record(-40, t.fixtures.keyIds.read, 'progress.read', 'disclosed')
    await record(-1, t.fixtures.keyIds.read, 'progress.read', 'disclosed')
    await record(0, `dashboard:${dana.id}`, 'students.list', 'disclosed')
  })

  it("lists who, when, what and under which agreement, oldest first, with the agreement's terms", async () => {
    const res = await operator.get(report)
    expect(res.statusCode).toBe(200)
    expect(res.body).toContain('<h1>Student disclosure report</h1>')
    expect(res.body).toContain(`Student <strong>Ada</strong>, id <code>${STUDENTS.ada}</code>.`)
    const rows = [...res.body.matchAll(/<tr><td>(\d{4}-\d\d-\d\d) [^<]*<\/td>(.*?)<\/tr>/g)].map((m) => [
      m[1],
      m[2]!.replace(/<[^>]+>/g, '|').replace(/\|+/g, '|'),
    ])
    expect(rows).toEqual([
      [
        '2026-01-21',
        expect.stringMatching(
          /^\|Acme Learning\|key read \(\|cur_live_\w+…\|, live\)\|progress.read\|disclosed\|first name, tier, progress\|none in force\|$/,
        ),
      ],
      ['2026-03-01', expect.stringContaining('|progress.read|disclosed|first name, tier, progress|DSA-Acme Learning|')],
      [
        '2026-03-02',
        '|Acme Learning|dashboard: dana@acme.example|students.list|disclosed|first name, tier|DSA-Acme Learning|',
      ],
    ])
    // The fixtures' agreement has no recorded purpose: the page says where it is.
    expect(res.body).toContain(
      '<td>DSA-Acme Learning</td><td>Acme Learning</td><td>not recorded (see the signed document, DSA-Acme Learning)</td>' +
        '<td>first name, tier and progress</td><td>2026-01-31 to 2027-03-02</td>' +
        '<td>delete within 30 days of its end (by 2027-04-01)</td>',
    )
    expect(res.body).toContain(`<a class="button" href="${report}.csv" download>Download CSV</a>`)
    expect(res.body).not.toContain('Later records')
  })

  it("is reached from the disclosure log, by a student's id or a filter on it", async () => {
    const log = await operator.get(`/dashboard/operator/disclosures?student=${STUDENTS.ada.toUpperCase()}`)
    expect(log.body).toContain(`<a href="${report}">Disclosure report for\nthis student</a>`)
    expect(log.body).toContain(`<a href="${report}"><code>${STUDENTS.ada}</code></a>`)
    // The address takes the id in either case.
    expect((await operator.get(report.replace(STUDENTS.ada, STUDENTS.ada.toUpperCase()))).body).toContain(
      '<strong>Ada</strong>',
    )
  })

  it('says so for an id no student has, and pages 200 records at a time without repeating one', async () => {
    const nobody = await operator.get(`/dashboard/operator/students/${STUDENTS.nobody}/disclosures`)
    expect(nobody.body).toContain(`No student with id <code>${STUDENTS.nobody}</code> is stored now`)
    expect(nobody.body).toContain('No disclosure of this student is recorded.')
    for (let i = 0; i < 450; i++)
      await recordDisclosure(
        t.storage.db,
        {
          at: t.clock.now() + i,
          requestId: `page-${i}`,
          keyId: t.fixtures.keyIds.read,
          organisationId: t.fixtures.orgs.acme,
        },
        STUDENTS.cleo,
        'progress.read',
        'denied_scope',
      )
    const seen: string[] = []
    let url = `/dashboard/operator/students/${STUDENTS.cleo}/disclosures`
    for (let page = 0; page < 5; page++) {
      const res = await operator.get(url)
      const times = [...res.body.matchAll(/<td>(2026-03-02 09:00 UTC)<\/td>/g)]
      seen.push(...times.map((m) => m[1]!))
      const later = /<a rel="next" href="([^"]+)">Later records<\/a>/.exec(res.body)?.[1]
      if (later === undefined) break
      expect(times).toHaveLength(200)
      url = later
    }
    expect(seen).toHaveLength(450)
  })

  it('downloads every record as CSV or JSON, each download audited', async () => {
    const auditsBefore = await t.storage.db.selectFrom('audit_log').select('id').execute()
    const csv = await operator.get(`${report}.csv`)
    expect(csv.statusCode).toBe(200)
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8')
    expect(csv.headers['content-disposition']).toBe(`attachment; filename="disclosures-${STUDENTS.ada}-2026-03-02.csv"`)
    expect(csv.headers['cache-control']).toBe('no-store')
    const records = parseCsv(csv.body)
    expect(records).toHaveLength(4)
    const json = await operator.get(`${report}.json`)
    expect(json.headers['content-type']).toBe('application/json; charset=utf-8')
    const document = JSON.parse(json.body)
    expect(document).toMatchObject({ student: { id: STUDENTS.ada, firstName: 'Ada' }, rows: 3 })
    expect(
      document.disclosures.map(
        (row: { agreement: { documentRef: string } | null }) => row.agreement?.documentRef ?? null,
      ),
    ).toEqual([null, 'DSA-Acme Learning', 'DSA-Acme Learning'])
    // A HEAD request shows nothing, so it is not a download.
    const head = await t.app.inject({
      method: 'HEAD',
      url: `${report}.csv`,
      headers: {
        cookie: [...operator.cookies].map(([name, value]) => `${name}=${value}`).join('; '),
        'sec-fetch-site': 'same-origin',
      },
    })
    expect([head.statusCode, head.headers['content-type'], head.body]).toEqual([200, 'text/csv; charset=utf-8', ''])
    const audits = await t.storage.db
      .selectFrom('audit_log')
      .select(['actor', 'action', 'target', 'detail'])
      .orderBy('id')
      .execute()
    expect(
      audits.slice(auditsBefore.length).map((row) => [row.actor, row.action, row.target, JSON.parse(row.detail)]),
    ).toEqual([
      [
        'account:ops@example.org',
        'disclosures.report',
        `student:${STUDENTS.ada}`,
        { student: STUDENTS.ada, format: 'csv' },
      ],
      [
        'account:ops@example.org',
        'disclosures.report',
        `student:${STUDENTS.ada}`,
        { student: STUDENTS.ada, format: 'json' },
      ],
    ])
  })
})
