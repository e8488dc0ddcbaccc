/**
 * The Request log pages: a partner finds a request by the id its 403 problem gave, landing on its
 * entry, and lists its own organisation's entries only, filtered; the operator sees every
 * organisation's, and filters by organisation.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { bearer, buildTestApp, STUDENTS } from '../helper.js'
import { perSuite } from '../support/built.js'
import { DashboardClient, makeOwner, signedInOperator } from './dashboard-client.js'

describe('the Request log pages', () => {
  const t = perSuite(() => buildTestApp())
  let acme: DashboardClient
  let beta: DashboardClient
  let refused: string
  let betaRequest: string

  const prefixOf = async (keyId: string) =>
    (
      await t.storage.db
        .selectFrom('api_keys')
        .select('display_prefix')
        .where('id', '=', keyId)
        .executeTakeFirstOrThrow()
    ).display_prefix

  beforeAll(async () => {
    acme = new DashboardClient(t.app, '192.0.2.30')
    beta = new DashboardClient(t.app, '192.0.2.31')
    for (const [client, email, organisationId] of [
      [acme, 'acme@partner.example', t.fixtures.orgs.acme],
      [beta, 'beta@partner.example', t.fixtures.orgs.beta],
    ] as const) {
      expect((await client.signUp(email)).statusCode).toBe(200)
      await makeOwner(t.storage.db, email, organisationId)
    }
    const { keys } = t.fixtures
    const forbidden = await t.send({ url: `/api/v1/students/${STUDENTS.ada}/progress`, headers: bearer(keys.catalog) })
    expect(forbidden.statusCode).toBe(403)
    refused = forbidden.json().requestId
    // A second apart, so that newest first is one order.
    t.clock.advance(1000)
    await t.send({ url: '/api/v1/tiers', headers: bearer(keys.readWrite) })
    t.clock.advance(1000)
    await t.send({ url: `/api/v1/students/${STUDENTS.nobody}/progress`, headers: bearer(keys.read) })
    t.clock.advance(1000)
    const other = await t.send({ url: `/api/v1/students/${STUDENTS.cleo}/progress`, headers: bearer(keys.otherOrg) })
    betaRequest = other.headers['x-request-id'] as string
  })

  it("finds a request by the id of its 403 problem, landing on its entry; another organisation's finds nothing", async () => {
    const page = await acme.get(`/dashboard/partner/request-log?request=${refused.toUpperCase()}`)
    expect(page.statusCode).toBe(200)
    const entry = /<section class="card" id="entry"[\s\S]*?<\/section>/.exec(page.body)?.[0] ?? ''
    for (const part of [refused, 'GET <code>/api/v1/students/:id/progress</code>', '403', 'insufficient_scope'])
      expect(entry).toContain(part)
    expect(entry).toContain(`<code>${await prefixOf(t.fixtures.keyIds.catalog)}\u2026</code> catalog`)
    expect(entry).not.toContain(STUDENTS.ada)
    // The box that found it says it is a search, and sends the browser to the entry.
    expect(page.body).toContain('action="/dashboard/partner/request-log#entry" class="stack" role="search"')

    const elsewhere = await beta.get(`/dashboard/partner/request-log?request=${refused}`)
    expect(elsewhere.body).toContain('No request with the id')
    expect(elsewhere.body).not.toContain('insufficient_scope</code></a></dd>')
    const notAnId = await acme.get('/dashboard/partner/request-log?request=not-an-id')
    expect(notAnId.body).toContain('A request id is a UUID')
  })

  it("lists the organisation's own entries newest first, filtered, and never another's", async () => {
    const all = await acme.get('/dashboard/partner/request-log')
    expect(all.body).toContain(refused)
    expect(all.body).not.toContain(betaRequest)
    expect(all.body).not.toContain(STUDENTS.nobody)
    // Newest first: the refused request was the first sent.
    expect(all.body.indexOf('student_not_found')).toBeLessThan(all.body.indexOf('insufficient_scope</code>'))

    const refusals = await acme.get('/dashboard/partner/request-log?status=4xx')
    expect(refusals.body).toContain(refused)
    expect(refusals.body).not.toContain('<td>200</td>')
    const byProblem = await acme.get(
      '/dashboard/partner/request-log?problem=student_not_found&route=/api/v1/students/:id/progress',
    )
    expect(byProblem.body).toContain('student_not_found')
    expect(byProblem.body).not.toContain(refused)
    const byKey = await acme.get(`/dashboard/partner/request-log?key=${t.fixtures.keyIds.readWrite}`)
    expect(byKey.body).toContain('<td>200</td>')
    expect(byKey.body).not.toContain(refused)
    // Another organisation's key, asked for by id: nothing.
    const theirs = await acme.get(`/dashboard/partner/request-log?key=${t.fixtures.keyIds.otherOrg}`)
    expect(theirs.body).toContain('No entry matches')
    const bad = await acme.get('/dashboard/partner/request-log?status=6xx&route=/etc/passwd')
    expect(bad.statusCode).toBe(200)
    expect(bad.body).toContain('Choose a status class from the list.')
    expect(bad.body).toContain('Choose a route from the list.')
  })

  it("shows the operator every organisation's entries, filterable by organisation", async () => {
    const operator = await signedInOperator(t, '192.0.2.32')
    const all = await operator.get('/dashboard/operator/request-log')
    expect(all.statusCode).toBe(200)
    for (const text of [refused, betaRequest, 'Acme Learning', 'Beta Tutors']) expect(all.body).toContain(text)
    const beta = await operator.get(`/dashboard/operator/request-log?organisation=${t.fixtures.orgs.beta}`)
    expect(beta.body).toContain(betaRequest)
    expect(beta.body).not.toContain(refused)
    const found = await operator.get(`/dashboard/operator/request-log?request=${betaRequest}`)
    expect(found.body).toContain('<dt>Organisation</dt><dd>Beta Tutors</dd>')
  })
})
