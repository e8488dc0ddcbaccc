import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, buildTestApp, type TestContext } from '../helper.js'

describe('smoke', () => {
  let t: TestContext
  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(async () => t.close())

  it('serves tiers to a catalog key', async () => {
    const res = await t.app.inject({ url: '/api/v1/tiers', headers: bearer(t.fixtures.keys.catalog) })
    expect(res.statusCode).toBe(200)
    expect(res.json().tiers.map((tier: { id: string }) => tier.id)).toEqual(['explorer', 'builder', 'innovator'])
  })
})
