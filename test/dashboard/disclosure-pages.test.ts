/** The operator's disclosure log page pages through the log, newest first, filters kept. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { recordDisclosure } from '../../src/storage/disclosure-log.js'
import { buildTestApp, STUDENTS, type TestContext } from '../helper.js'
import { type DashboardClient, signedInOperator } from './dashboard-client.js'

describe('the operator disclosure log page', () => {
  let t: TestContext
  let operator: DashboardClient
  beforeAll(async () => {
    t = await buildTestApp()
    operator = await signedInOperator(t, '192.0.2.4')
  })
  afterAll(async () => t.close())

  it('shows 200 records a page with an "Older records" link that keeps the filter, until the last page', async () => {
    const context = { keyId: t.fixtures.keyIds.read, organisationId: t.fixtures.orgs.acme }
    for (let i = 0; i < 450; i++) {
      const student = i % 2 === 0 ? STUDENTS.ada : STUDENTS.ben
      await recordDisclosure(
        t.storage.db,
        { ...context, at: t.clock.now() + i, requestId: `req-${i}` },
        student,
        'progress.read',
        'disclosed',
      )
    }
    const seen: string[] = []
    let url = `/dashboard/operator/disclosures?student=${STUDENTS.ada}`
    for (let page = 0; page < 5; page++) {
      const res = await operator.get(url)
      expect(res.statusCode).toBe(200)
      seen.push(...[...res.body.matchAll(/<code>(req-\d+)<\/code>/g)].map((m) => m[1]!))
      const older = /<a rel="next" href="([^"]+)">Older records<\/a>/.exec(res.body)?.[1]
      if (older === undefined) break
      url = older.replaceAll('&amp;', '&')
      expect(url).toContain(`student=${STUDENTS.ada}`)
    }
    const expected = Array.from({ length: 225 }, (_, k) => `req-${448 - 2 * k}`)
    expect(seen).toEqual(expected)
  })
})
