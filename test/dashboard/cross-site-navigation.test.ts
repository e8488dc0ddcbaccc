/**
 * Pages with children's data open only from the dashboard itself. The attack: five cross-site
 * navigations (`Sec-Fetch-Site: cross-site`, `Sec-Fetch-Mode: navigate`) to a signed-in
 * partner's Students page, which SameSite=Lax lets through with the session cookie, wrote 15
 * disclosure rows. Now such a request gets a "continue" page that shows and records nothing.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { listDisclosures } from '../../src/storage/disclosure-log.js'
import { buildTestApp, STUDENTS } from '../helper.js'
import { DashboardClient, signedInOperator, makeOwner } from './dashboard-client.js'
import { perSuite } from '../support/built.js'

const CROSS_SITE = { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' }
// inject() sends `Host: localhost:80`: this is the dashboard's own origin.
const SELF = 'http://localhost'
const STUDENT_IDS = Object.values(STUDENTS)

/** Navigations that did not start on the dashboard, in every form a browser (or an old one) sends. */
const FROM_ELSEWHERE: Record<string, string | undefined>[] = [
  CROSS_SITE,
  { 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'navigate' },
  { 'sec-fetch-site': 'Cross-Site' },
  { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'image' },
  // Fetch Metadata wins over a Referer claiming our origin.
  { 'sec-fetch-site': 'same-site', referer: `${SELF}/dashboard/partner` },
  { 'sec-fetch-site': '' },
  // Browsers without Fetch Metadata: the Referer decides.
  { 'sec-fetch-site': undefined, 'sec-fetch-mode': undefined, referer: 'https://evil.example/page' },
  { 'sec-fetch-site': undefined, 'sec-fetch-mode': undefined, referer: 'http://localhost:8080/page' },
  { 'sec-fetch-site': undefined, 'sec-fetch-mode': undefined, referer: 'https://localhost/dashboard' },
  { 'sec-fetch-site': undefined, 'sec-fetch-mode': undefined, referer: 'not a url' },
  { 'sec-fetch-site': undefined, 'sec-fetch-mode': undefined },
]

describe('pages with children’s data, opened from another site', () => {
  const t = perSuite(() => buildTestApp())
  let acme: DashboardClient

  beforeAll(async () => {
    acme = new DashboardClient(t.app, '192.0.2.20')
    expect((await acme.signUp('acme@partner.example')).statusCode).toBe(200)
    // As if Acme's application had been approved: it has an agreement and three linked students.
    await makeOwner(t.storage.db, 'acme@partner.example', t.fixtures.orgs.acme)
  })

  const rows = async () => (await listDisclosures(t.storage.db, { organisationId: t.fixtures.orgs.acme })).length

  function expectContinuePage(body: string, url: string): void {
    expect(body).toContain('<h1>Open this page?</h1>')
    const link = `<a class="button" href="${url.replaceAll('&', '&amp;')}">Continue to the page</a>`
    expect(body).toContain(link)
    // Nothing but the address the request named (an operator's filter may hold a student id).
    const page = body.replace(link, '')
    for (const id of STUDENT_IDS) expect(page).not.toContain(id)
    for (const name of ['Ada', 'Ben', 'Dev']) expect(page).not.toContain(`<td>${name}</td>`)
  }

  it('five cross-site navigations to the Students page write no disclosure row and show no student; a same-origin one writes its rows', async () => {
    const before = await rows()
    const pages = []
    for (let i = 0; i < 5; i++) pages.push(await acme.get('/dashboard/partner/students', CROSS_SITE))
    expect((await rows()) - before).toBe(0)
    for (const page of pages) {
      expect(page.statusCode).toBe(200)
      expectContinuePage(page.body, '/dashboard/partner/students')
    }

    const own = await acme.get('/dashboard/partner/students')
    for (const id of [STUDENTS.ada, STUDENTS.ben, STUDENTS.dev]) expect(own.body).toContain(id)
    expect(await rows()).toBe(before + 3)
  })

  it('answers every disguise of a request from elsewhere, sent at once, with the continue page', async () => {
    const before = await rows()
    const pages = await Promise.all(FROM_ELSEWHERE.map((headers) => acme.get('/dashboard/partner/students', headers)))
    for (const [i, page] of pages.entries()) {
      expect(page.statusCode, JSON.stringify(FROM_ELSEWHERE[i])).toBe(200)
      expectContinuePage(page.body, '/dashboard/partner/students')
    }
    expect(await rows()).toBe(before)
  })

  it('opens for the user’s own navigation: same-origin, typed (`none`), or an old browser’s own Referer', async () => {
    const own: Record<string, string | undefined>[] = [
      { 'sec-fetch-site': 'same-origin' },
      { 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate' },
      { 'sec-fetch-site': 'Same-Origin' },
      { 'sec-fetch-site': undefined, 'sec-fetch-mode': undefined, referer: `${SELF}/dashboard/partner` },
      { 'sec-fetch-site': undefined, 'sec-fetch-mode': undefined, referer: 'http://localhost:80/dashboard/x?y' },
    ]
    for (const headers of own) {
      const before = await rows()
      const page = await acme.get('/dashboard/partner/students', headers)
      expect(page.body, JSON.stringify(headers)).toContain(STUDENTS.ada)
      expect(await rows()).toBe(before + 3)
    }
  })

  it('links the continue page to the same address, search included, and that link discloses what it shows', async () => {
    const url = '/dashboard/partner/students?q=AD&after='
    const page = await acme.get(url, CROSS_SITE)
    expectContinuePage(page.body, url)
    const href = /<a class="button" href="([^"]+)">Continue to the page<\/a>/
      .exec(page.body)![1]!
      .replaceAll('&amp;', '&')
    const before = await listDisclosures(t.storage.db, { studentId: STUDENTS.ada })
    // Followed from the continue page, which is ours: a same-origin navigation.
    const followed = await acme.get(href, { referer: `${SELF}${url}` })
    expect(followed.body).toContain(STUDENTS.ada)
    expect(followed.body).not.toContain(STUDENTS.ben)
    expect((await listDisclosures(t.storage.db, { studentId: STUDENTS.ada })).length).toBe(before.length + 1)
  })

  it('guards every page that shows student ids: both disclosure logs, a student report, the downloads, the audit log', async () => {
    const operator = await signedInOperator(t, '192.0.2.4')
    await acme.get('/dashboard/partner/students')
    // Same-origin, each shows student ids (an export filtered by a student puts its id in the audit log).
    const report = `/dashboard/operator/students/${STUDENTS.ada}/disclosures`
    const downloads = [`/dashboard/operator/disclosures.csv?student=${STUDENTS.ada}`, `${report}.csv`, `${report}.json`]
    for (const url of downloads) expect((await operator.get(url)).body, url).toContain(STUDENTS.ada)
    const pages: [DashboardClient, string][] = [
      [acme, '/dashboard/partner/disclosures'],
      [operator, `/dashboard/operator/disclosures?student=${STUDENTS.ada}`],
      [operator, report],
      [operator, '/dashboard/operator/audit'],
    ]
    for (const [client, url] of pages) expect((await client.get(url)).body, url).toContain(STUDENTS.ada)
    const audits = async () => (await t.storage.db.selectFrom('audit_log').select('id').execute()).length
    const auditsBefore = await audits()
    for (const [client, url] of [...pages, ...downloads.map((url) => [operator, url] as [DashboardClient, string])]) {
      for (const headers of FROM_ELSEWHERE) {
        const page = await client.get(url, headers)
        expect(page.statusCode, `${url} ${JSON.stringify(headers)}`).toBe(200)
        expect(page.headers['content-type']).toMatch(/^text\/html/)
        expectContinuePage(page.body, url)
      }
    }
    // No download was run, so none was audited either.
    expect(await audits()).toBe(auditsBefore)
  })

  it('still sends a signed-out visitor to sign in first, and a partner away from operator pages', async () => {
    const anonymous = new DashboardClient(t.app, '192.0.2.30')
    const signIn = await anonymous.get('/dashboard/partner/students', CROSS_SITE)
    expect(signIn.statusCode).toBe(303)
    expect(signIn.headers.location).toBe('/dashboard/login?next=%2Fdashboard%2Fpartner%2Fstudents')
    expect((await acme.get('/dashboard/operator/disclosures', CROSS_SITE)).statusCode).toBe(403)
  })
})
