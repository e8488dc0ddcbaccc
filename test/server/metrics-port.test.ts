/**
 * METRICS_PORT: a listener of its own that serves /metrics and nothing else, while the main port
 * does not serve it; and with WORKERS=2 the primary answers for both workers together, on that
 * port and (through the primary) on the main port with METRICS_TOKEN.
 */
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { CATALOG_DIR, tempDir } from '../helper.js'
import { REDIS_URL } from '../support/services.js'
import { startServer } from './process.js'

const TOKEN = 'metrics-token-for-tests-0123456789abcdef'
const TIERS_OK = 'http_requests_total{route="/api/v1/tiers",method="GET",status_class="2xx"}'

const demoKey = (output: string) => /Demo catalog key[^\n]*\n\s+(cur_live_\w+)/.exec(output)![1]!
const metricsUrl = (output: string) => /metrics at (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(output)?.[1]

function sampleOf(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `))
  return line === undefined ? 0 : Number(line.slice(series.length + 1))
}

async function tiers(base: string, key: string, times: number): Promise<void> {
  const statuses = await Promise.all(
    Array.from({ length: times }, () =>
      fetch(`${base}/api/v1/tiers`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status),
    ),
  )
  expect(statuses.every((status) => status === 200)).toBe(true)
}

describe('METRICS_PORT', () => {
  it('serves /metrics on its own port only, and the main port does not', { timeout: 60_000 }, async () => {
    const server = await startServer({
      DATABASE_URL: `sqlite:${path.join(tempDir(), 'metrics-port.db')}`,
      CATALOG_DIR,
      METRICS_PORT: '0',
    })
    try {
      const url = metricsUrl(await server.waitForOutput((output) => metricsUrl(output) !== undefined))!
      await tiers(server.baseUrl, demoKey(server.output()), 3)
      const scrape = await fetch(url)
      expect(scrape.status).toBe(200)
      expect(scrape.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
      expect(sampleOf(await scrape.text(), TIERS_OK)).toBe(3)
      // Nothing else on the metrics port; no /metrics on the main port.
      expect((await fetch(url.replace('/metrics', '/api/v1/tiers'))).status).toBe(404)
      expect((await fetch(url.replace('/metrics', '/'))).status).toBe(404)
      expect((await fetch(`${server.baseUrl}/metrics`)).status).toBe(404)
      expect(await server.stop('SIGTERM')).toBe(0)
    } finally {
      server.killAll()
    }
  })
})

describe.skipIf(REDIS_URL === '')('METRICS_PORT and METRICS_TOKEN with WORKERS=2', () => {
  it('answers for both workers together', { timeout: 120_000 }, async () => {
    const server = await startServer({
      DATABASE_URL: `sqlite:${path.join(tempDir(), 'metrics-workers.db')}`,
      CATALOG_DIR,
      WORKERS: '2',
      REDIS_URL,
      REDIS_KEY_PREFIX: `test:metrics-workers:${Date.now()}:`,
      METRICS_PORT: '0',
      METRICS_TOKEN: TOKEN,
    })
    try {
      const listening = (output: string) => output.match(/"pid":\d+[^\n]*Server listening/g)?.length ?? 0
      const url = metricsUrl(
        await server.waitForOutput((output) => listening(output) >= 2 && metricsUrl(output) !== undefined),
      )!
      // New connections each time: the requests spread over both workers.
      await tiers(server.baseUrl, demoKey(server.output()), 40)
      const fromPort = await (await fetch(url)).text()
      expect(sampleOf(fromPort, TIERS_OK)).toBe(40)
      // The primary schedules connections round-robin: one worker alone would count about half.
      expect(fromPort).toContain('nodejs_eventloop_lag_seconds')
      const main = await fetch(`${server.baseUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
      expect(main.status).toBe(200)
      expect(sampleOf(await main.text(), TIERS_OK)).toBe(40)
      expect((await fetch(`${server.baseUrl}/metrics`)).status).toBe(401)
      expect(await server.stop('SIGTERM')).toBe(0)
    } finally {
      server.killAll()
    }
  })
})
