/**
 * Requests to platforms keep the webhooks' SSRF rules and never read more than they may.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { platformFetch, platformJson } from '../../src/platforms/platform-fetch.js'

describe('a request to a platform', () => {
  let base = ''
  const server = http.createServer((request, response) => {
    if (request.url === '/big') return response.end('x'.repeat(70_000))
    if (request.url === '/redirect') return response.writeHead(302, { location: '/json' }).end()
    if (request.url === '/hang') return
    if (request.url === '/array') return response.end('[1]')
    response.setHeader('content-type', 'application/json')
    response.end(JSON.stringify({ method: request.method }))
  })
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })
  const options = { method: 'GET' as const, timeoutMs: 2000, allowLoopback: true, maxBytes: 65_536 }

  it('reads JSON from an allowed platform', async () => {
    expect(await platformJson(`${base}/json`, options)).toEqual({ ok: true, status: 200, json: { method: 'GET' } })
    expect(await platformJson(`${base}/json`, { ...options, method: 'POST', body: '{}' })).toMatchObject({
      json: { method: 'POST' },
    })
  })

  it('refuses loopback and plain http unless allowed, private addresses always, and names that resolve inside', async () => {
    expect(await platformFetch(`${base}/json`, { ...options, allowLoopback: false })).toMatchObject({ ok: false })
    expect(await platformFetch('http://example.com/x', options)).toMatchObject({
      ok: false,
      error: expect.stringMatching(/https/),
    })
    expect(await platformFetch('https://10.0.0.1/x', options)).toMatchObject({ ok: false })
    expect(await platformFetch('https://169.254.169.254/latest', options)).toMatchObject({ ok: false })
    const inside = await platformFetch('https://platform.example/x', {
      ...options,
      resolve: async () => [{ address: '192.168.1.5', family: 4 }],
    })
    expect(inside).toEqual({ ok: false, error: 'refused: the host does not resolve to a public address' })
  })

  it('cuts off an answer over the limit, does not follow redirects, and gives up at the deadline', async () => {
    expect(await platformFetch(`${base}/big`, options)).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^too_large/),
    })
    expect(await platformFetch(`${base}/redirect`, options)).toMatchObject({ ok: true, status: 302 })
    expect(await platformFetch(`${base}/hang`, { ...options, timeoutMs: 100 })).toEqual({
      ok: false,
      error: 'timed out',
    })
    expect(await platformJson(`${base}/array`, options)).toMatchObject({
      ok: false,
      error: 'the answer is not a JSON object',
    })
  })
})
