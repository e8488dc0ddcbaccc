import { describe, expect, it } from 'vitest'
import { bearer, buildTestApp, REQUEST_PATH } from '../helper.js'
import { perSuite } from '../support/built.js'

describe('smoke', () => {
  const t = perSuite(() => buildTestApp())

  it('serves tiers to a catalog key', async () => {
    const res = await t.call({ url: '/api/v1/tiers', headers: bearer(t.fixtures.keys.catalog) })
    expect(res.statusCode).toBe(200)
    expect(res.json().tiers.map((tier: { id: string }) => tier.id)).toEqual(['explorer', 'builder', 'innovator'])
  })

  // Path-specific on purpose: it proves the run is on the path it names, so that a fast run whose
  // switch stopped working cannot pass as one.
  it(`takes the ${REQUEST_PATH} request path: a catalog read with a cached key is ${REQUEST_PATH === 'fast' ? 'answered before' : 'left to'} the router`, async () => {
    const key = bearer(t.fixtures.keys.read)
    // The first use of a key looks it up in storage, which only the router does.
    expect((await t.call({ url: '/api/v1/lessons', headers: key })).statusCode).toBe(200)
    const before = t.routed
    expect((await t.call({ url: '/api/v1/lessons', headers: key })).statusCode).toBe(200)
    expect(t.routed - before).toBe(REQUEST_PATH === 'fast' ? 0 : 1)
  })
})
