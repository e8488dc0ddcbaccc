import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { isForbiddenAddress } from '../../src/webhooks/forbidden-addresses.js'
import { sendWebhook } from '../../src/webhooks/send-webhook.js'
import { checkWebhookUrl } from '../../src/webhooks/webhook-url.js'

describe('webhook targets (SSRF)', () => {
  it('refuse private, loopback, link-local, metadata, mapped and reserved addresses, and allow public ones', () => {
    for (const address of [
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '127.0.0.1',
      '127.8.8.8',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      'fe80::1',
      'fd00::1',
      '::ffff:10.0.0.1',
      '::ffff:127.0.0.1',
      '::ffff:8.8.8.8',
      // IPv4-compatible (::/96), 6to4 (2002::/16) and Teredo (2001::/32) carry an IPv4 address
      // a relay may deliver to: refused whole, like IPv4-mapped ones.
      '::a00:5',
      '::10.0.0.5',
      '::8.8.8.8',
      '2002:a00:5::1',
      '2002:808:808::1',
      '2001:0:4136:e378:8000:63bf:3fff:fdd2',
      '2001::1',
      'not an address',
    ]) {
      expect(isForbiddenAddress(address), address).toBe(true)
    }
    for (const address of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '2001:4860:4860::8888']) {
      expect(isForbiddenAddress(address), address).toBe(false)
    }
    // The development switch lets loopback through, and nothing else.
    expect(isForbiddenAddress('127.0.0.1', true)).toBe(false)
    expect(isForbiddenAddress('::1', true)).toBe(false)
    expect(isForbiddenAddress('10.0.0.1', true)).toBe(true)
    expect(isForbiddenAddress('169.254.169.254', true)).toBe(true)
  })

  it('accept only https URLs naming a public host when registered', () => {
    expect(checkWebhookUrl('https://hooks.example.com/curriculum')).toMatchObject({ ok: true })
    for (const [url, reason] of [
      ['http://hooks.example.com/x', /https/],
      ['ftp://hooks.example.com/x', /https/],
      ['https://user:pw@hooks.example.com/x', /credentials/],
      ['https://localhost/x', /public host/],
      ['https://127.0.0.1/x', /public host/],
      ['https://[::1]/x', /public host/],
      ['https://169.254.169.254/latest/meta-data', /public host/],
      ['https://10.0.0.7/x', /public host/],
      ['https://[::a00:7]/x', /public host/],
      ['https://[2002:a00:7::1]/x', /public host/],
      ['https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/x', /public host/],
      ['not a url', /full URL/],
      [`https://example.com/${'a'.repeat(2100)}`, /2048/],
    ] as const) {
      const verdict = checkWebhookUrl(url)
      expect(verdict.ok, url).toBe(false)
      if (!verdict.ok) expect(verdict.reason, url).toMatch(reason)
    }
    expect(checkWebhookUrl('http://127.0.0.1:8080/x', true)).toMatchObject({ ok: true })
    expect(checkWebhookUrl('http://10.0.0.7/x', true).ok).toBe(false)
  })

  it('refuse at send time a name that resolves to an internal address, without connecting or naming the address', async () => {
    let connections = 0
    const server = http.createServer((_req, res) => {
      connections++
      res.end('ok')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    try {
      for (const address of ['127.0.0.1', '10.0.0.5', '169.254.169.254']) {
        const attempt = await sendWebhook(new URL(`https://hooks.example.com:${port}/x`), {}, '{}', {
          timeoutMs: 1000,
          allowLoopback: false,
          resolve: async () => [{ address, family: 4 }],
        })
        expect(attempt).toMatchObject({ ok: false, status: null, bodySent: false })
        // No DNS oracle: the log a partner reads never says what an internal name resolves to.
        expect(attempt.error).toBe('refused: the host does not resolve to a public address')
      }
      // Nor whether the name resolves at all.
      for (const resolve of [async () => [], async () => Promise.reject(new Error('ENOTFOUND'))]) {
        const attempt = await sendWebhook(new URL('https://internal.example/x'), {}, '{}', {
          timeoutMs: 1000,
          allowLoopback: false,
          resolve,
        })
        expect(attempt.error).toBe('refused: the host does not resolve to a public address')
      }
      // One public and one private answer: refused as a whole.
      const mixed = await sendWebhook(new URL('https://hooks.example.com/x'), {}, '{}', {
        timeoutMs: 1000,
        allowLoopback: false,
        resolve: async () => [
          { address: '93.184.216.34', family: 4 },
          { address: '192.168.0.10', family: 4 },
        ],
      })
      expect(mixed.error).toBe('refused: the host does not resolve to a public address')
      expect(mixed.error).not.toMatch(/192\.168|93\.184/)
      expect(connections).toBe(0)
    } finally {
      server.close()
    }
  })

  it('connects to the address it checked, keeps at most 1 KB of the answer and follows no redirect', async () => {
    const paths: string[] = []
    const server = http.createServer((req, res) => {
      paths.push(req.url ?? '')
      if (req.url === '/redirect') {
        res.writeHead(302, { location: '/elsewhere' }).end()
        return
      }
      res.end('x'.repeat(50_000))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    try {
      // The name resolves to loopback, which the development switch allows: the request reaches it.
      const big = await sendWebhook(new URL(`http://hooks.test:${port}/big`), {}, '{}', {
        timeoutMs: 2000,
        allowLoopback: true,
        resolve: async () => [{ address: '127.0.0.1', family: 4 }],
      })
      expect(big).toMatchObject({ ok: true, status: 200 })
      expect(big.response.length).toBe(1024)
      const redirected = await sendWebhook(new URL(`http://127.0.0.1:${port}/redirect`), {}, '{}', {
        timeoutMs: 2000,
        allowLoopback: true,
      })
      expect(redirected).toMatchObject({ ok: false, status: 302 })
      expect(paths).toEqual(['/big', '/redirect'])
    } finally {
      server.close()
    }
  })
})
