/**
 * What a browser opening the service finds: `/` links the reference and the dashboard, and
 * `/favicon.ico` is no 404; neither is in the API's OpenAPI document.
 */
import { describe, expect, it } from 'vitest'
import { buildTestApp } from '../helper.js'
import { perSuite } from '../support/built.js'

describe('front door', () => {
  const t = perSuite(() => buildTestApp())

  it('answers / with a small page linking /docs and /dashboard', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(res.headers['content-security-policy']).toContain("default-src 'none'")
    expect(res.body).toContain('<a href="/docs">')
    expect(res.body).toContain('<a href="/dashboard">')
    // Both links lead somewhere.
    expect((await t.app.inject({ method: 'GET', url: '/docs' })).statusCode).toBe(200)
    expect((await t.app.inject({ method: 'GET', url: '/dashboard' })).statusCode).toBe(303)
  })

  it('answers /favicon.ico without a 404', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/favicon.ico' })
    expect(res.statusCode).toBe(204)
    expect(res.headers['cache-control']).toContain('max-age')
  })

  it('keeps both out of the OpenAPI document', async () => {
    const doc = JSON.parse((await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).body) as {
      paths: Record<string, unknown>
    }
    expect(Object.keys(doc.paths)).not.toContain('/')
    expect(Object.keys(doc.paths)).not.toContain('/favicon.ico')
  })
})
