/**
 * Rolling a key from the partner's dashboard, over a real socket: the keys table offers it for
 * a key in force, the page asks how long the old key keeps working and explains a refused date,
 * the new key is shown once, and the table then says when the old one stops and which key replaced
 * it. Last use shows its 5-minute window with the client's address and family.
 */
import type { LightMyRequestResponse } from 'fastify'
import { beforeAll, describe, expect, it } from 'vitest'
import { bearer, buildTestApp } from '../helper.js'
import { perSuite } from '../support/built.js'
import type { HttpRequest } from '../support/http-client.js'
import { DashboardClient, makeOwner } from './dashboard-client.js'

const KEY = /id="new-key"[^>]*value="(cur_(?:test|live)_[\w-]+)"/
const HOUR = 3_600_000

/** The keys table's row of a key, by its display prefix. */
function rowOf(page: LightMyRequestResponse, prefix: string): string {
  const rows = page.body.split('<tr>').filter((row) => row.includes(`<code>${prefix}\u2026</code>`))
  expect(rows).toHaveLength(1)
  return rows[0]!.slice(0, rows[0]!.indexOf('</tr>'))
}

describe('rolling a key in the dashboard', () => {
  const t = perSuite(() => buildTestApp({ env: { RATE_LIMIT: '100000', ORGANISATION_RATE_LIMIT: '100000' } }))
  let partner: DashboardClient

  beforeAll(async () => {
    partner = new DashboardClient(t.app, '192.0.2.61', (request: HttpRequest) => t.send(request))
    await partner.signUp('roll@partner.example')
    // Acme from the fixtures: an agreement in force and most of the fixture keys.
    await makeOwner(t.storage.db, 'roll@partner.example', t.fixtures.orgs.acme)
  })

  const prefixOf = async (name: keyof typeof t.fixtures.keyIds) =>
    (
      await t.storage.db
        .selectFrom('api_keys')
        .select('display_prefix')
        .where('id', '=', t.fixtures.keyIds[name])
        .executeTakeFirstOrThrow()
    ).display_prefix

  it('rolls a key: both work until the chosen end, and the table says when the old one stops', async () => {
    const id = t.fixtures.keyIds.read
    const prefix = await prefixOf('read')
    const overview = await partner.get('/dashboard/partner')
    expect(rowOf(overview, prefix)).toContain(`href="/dashboard/partner/keys/${id}/roll"`)
    const page = await partner.get(`/dashboard/partner/keys/${id}/roll`)
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain('Choose this if the key leaked')

    const refused = await partner.post(`/dashboard/partner/keys/${id}/roll`, { overlap: 'date', 'roll-date': '' })
    expect(refused.statusCode).toBe(400)
    expect(refused.body).toContain('is neither an overlap')
    const tooLate = new Date(t.clock.now() + 40 * 24 * HOUR).toISOString().slice(0, 10)
    const late = await partner.post(`/dashboard/partner/keys/${id}/roll`, { overlap: 'date', 'roll-date': tooLate })
    expect([late.statusCode, late.body.includes('30 days at most')]).toEqual([400, true])

    const rolled = await partner.post(`/dashboard/partner/keys/${id}/roll`, { overlap: '24h' })
    expect(rolled.statusCode).toBe(303)
    const shown = await partner.follow(rolled)
    const replacement = KEY.exec(shown.body)?.[1]
    expect(replacement).toBeDefined()
    await t.app.services.changes.check()
    const old = await t.send({ url: '/api/v1/tiers', headers: bearer(t.fixtures.keys.read) })
    expect(old.headers.sunset).toBe(new Date(t.clock.now() + 24 * HOUR).toUTCString())
    expect((await t.send({ url: '/api/v1/tiers', headers: bearer(replacement!) })).statusCode).toBe(200)

    const row = rowOf(await partner.get('/dashboard/partner'), prefix)
    expect(row).toContain('rolled')
    expect(row).toContain(`stops ${new Date(t.clock.now() + 24 * HOUR).toISOString().slice(0, 16).replace('T', ' ')}`)
    expect(row).toContain(`replaced by <code>${replacement!.slice(0, 15)}\u2026</code>`)
    expect(row).not.toContain('/roll"')
    // Rolled already: the page says so, and a second roll makes no key.
    const again = await partner.post(`/dashboard/partner/keys/${id}/roll`, { overlap: '1h' })
    expect([again.statusCode, again.body.includes('rolled already')]).toEqual([409, true])
  })

  it('stops a leaked key at once', async () => {
    const id = t.fixtures.keyIds.write
    const rolled = await partner.post(`/dashboard/partner/keys/${id}/roll`, { overlap: 'now' })
    expect(rolled.statusCode).toBe(303)
    await t.app.services.changes.check()
    const old = await t.send({ url: '/api/v1/tiers', headers: bearer(t.fixtures.keys.write) })
    expect([old.statusCode, old.json().code]).toEqual([401, 'api_key_revoked'])
  })

  it("finds no key of another organisation's", async () => {
    const other = t.fixtures.keyIds.otherOrg
    expect((await partner.get(`/dashboard/partner/keys/${other}/roll`)).statusCode).toBe(404)
    expect((await partner.post(`/dashboard/partner/keys/${other}/roll`, { overlap: 'now' })).statusCode).toBe(404)
    const stillThere = await t.send({ url: '/api/v1/tiers', headers: bearer(t.fixtures.keys.otherOrg) })
    expect(stillThere.statusCode).toBe(200)
  })

  it("shows last use as its 5-minute window, with the client's address and family", async () => {
    const prefix = await prefixOf('catalog')
    const headers = { ...bearer(t.fixtures.keys.catalog), 'user-agent': 'python-requests/2.32.3' }
    expect((await t.send({ url: '/api/v1/tiers', headers })).statusCode).toBe(200)
    // What the 30-second flush would write.
    await t.app.services.usage.flush()
    const row = rowOf(await partner.get('/dashboard/partner'), prefix)
    const at = new Date(t.clock.now()).toISOString()
    const until = new Date(t.clock.now() + 5 * 60_000).toISOString().slice(11, 16)
    expect(row).toContain(`${at.slice(0, 16).replace('T', ' ')}\u2013${until} UTC`)
    expect(row).toContain('127.0.0.1 \u00b7 Python requests')
  })
})
