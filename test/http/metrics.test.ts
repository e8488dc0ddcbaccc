/**
 * GET /metrics on the main port behind METRICS_TOKEN: the token is required, requests are
 * counted on whichever path answers them (this file runs in the sqlite, sqlite-plain and
 * postgres projects), refusals and disclosure rows are counted, and no label carries a student
 * id, a key or a first name, however many students are asked for.
 */
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { bearer, buildTestApp, REQUEST_PATH, STUDENTS } from '../helper.js'
import { perSuite } from '../support/built.js'

const TOKEN = 'metrics-token-for-tests-0123456789abcdef'
const scrapeHeaders = bearer(TOKEN)

/** Every sample of a scrape, as `name{labels}` -> value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const at = line.lastIndexOf(' ')
    out.set(line.slice(0, at), Number(line.slice(at + 1)))
  }
  return out
}

/** Every label value of a scrape. */
function labelValues(text: string): string[] {
  return [...text.matchAll(/[a-z_]+="([^"]*)"/g)].map((match) => match[1]!)
}

describe('GET /metrics with METRICS_TOKEN', () => {
  const t = perSuite(() =>
    buildTestApp({
      env: { METRICS_TOKEN: TOKEN, RATE_LIMIT: '100000', ORGANISATION_RATE_LIMIT: '100000' },
    }),
  )
  const scrape = async () => {
    const res = await t.send({ url: '/metrics', headers: scrapeHeaders })
    expect(res.statusCode).toBe(200)
    return res.body
  }
  const value = async (series: string) => samples(await scrape()).get(series) ?? 0

  it('refuses a scrape without the token, or with another, as problem+json', async () => {
    const none = await t.send({ url: '/metrics' })
    expect(none.statusCode).toBe(401)
    expect(none.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(none.json().code).toBe('api_key_missing')
    expect(none.headers['www-authenticate']).toMatch(/^Bearer/)
    const wrong = await t.send({ url: '/metrics', headers: bearer(`${TOKEN}x`) })
    expect(wrong.statusCode).toBe(401)
    expect(wrong.json().code).toBe('api_key_invalid')
    // A partner's key is not the metrics token.
    expect((await t.send({ url: '/metrics', headers: bearer(t.fixtures.keys.catalog) })).statusCode).toBe(401)
  })

  it('answers in the Prometheus text format, with Node metrics', async () => {
    const res = await t.send({ url: '/metrics', headers: scrapeHeaders })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/)
    expect(res.body).toContain('# TYPE http_requests_total counter')
    expect(res.body).toContain('nodejs_eventloop_lag_seconds')
    expect(res.body).toContain('nodejs_heap_size_used_bytes')
    expect(res.body).toContain('nodejs_gc_duration_seconds')
    expect(res.body).toMatch(/rate_limit_store\{store="memory"\} 1/)
  })

  it(`counts catalog requests by route template on the ${REQUEST_PATH} path`, async () => {
    const series = 'http_requests_total{route="/api/v1/lessons/*",method="GET",status_class="2xx"}'
    const before = await value(series)
    const routed = t.routed
    const key = bearer(t.fixtures.keys.catalog)
    const tiers = (await t.send({ url: '/api/v1/tiers', headers: key })).json()
    const byTier = await t.send({ url: `/api/v1/lessons?tier=${tiers.tiers[0].id}`, headers: key })
    const slug = byTier.json().lessons[0].slug
    for (let i = 0; i < 3; i++)
      expect((await t.send({ url: `/api/v1/lessons/${slug}`, headers: key })).statusCode).toBe(200)
    expect(await value(series)).toBe(before + 3)
    const text = await scrape()
    expect(text).toContain(
      'http_request_duration_seconds_count{route="/api/v1/lessons/*",method="GET",status_class="2xx"}',
    )
    expect(text).toContain('http_requests_total{route="/api/v1/tiers",method="GET",status_class="2xx"}')
    // On the fast path the router saw none of the five (only scrapes: two since, perhaps the one
    // before, whose onResponse may run after its answer arrived); through the router, all of them.
    if (REQUEST_PATH === 'fast') expect(t.routed - routed).toBeLessThanOrEqual(3)
    else expect(t.routed - routed).toBeGreaterThanOrEqual(7)
  })

  it('counts refusals by problem code', async () => {
    const missing = 'http_refusals_total{code="api_key_missing"}'
    const invalid = 'http_refusals_total{code="api_key_invalid"}'
    const before = [await value(missing), await value(invalid)]
    expect((await t.send({ url: '/api/v1/tiers' })).statusCode).toBe(401)
    expect((await t.send({ url: '/api/v1/tiers', headers: bearer('cur_nosuchkey') })).statusCode).toBe(401)
    // The scrapes' own refusals above count too: two before this test's read of `invalid`.
    expect(await value(missing)).toBe(before[0]! + 1)
    expect(await value(invalid)).toBe(before[1]! + 1)
    const refusals = samples(await scrape())
    expect(
      refusals.get('http_requests_total{route="/api/v1/tiers",method="GET",status_class="4xx"}'),
    ).toBeGreaterThanOrEqual(2)
  })

  it('counts disclosure rows by action and outcome, and request-time writes by engine', async () => {
    const before = samples(await scrape())
    const read = bearer(t.fixtures.keys.read)
    expect((await t.send({ url: `/api/v1/students/${STUDENTS.ada}/progress`, headers: read })).statusCode).toBe(200)
    expect((await t.send({ url: `/api/v1/students/${STUDENTS.cleo}/progress`, headers: read })).statusCode).toBe(404)
    const after = samples(await scrape())
    const moved = (series: string) => (after.get(series) ?? 0) - (before.get(series) ?? 0)
    const disclosures = [...after.keys()].filter((series) => series.startsWith('disclosure_rows_written_total{'))
    expect(disclosures.reduce((sum, series) => sum + moved(series), 0)).toBe(2)
    expect(
      disclosures.some((series) => /outcome="(refused|denied|not_found)/.test(series) && moved(series) === 1),
    ).toBe(true)
    expect(moved(`storage_write_duration_seconds_count{engine="${t.storage.engine}"}`)).toBeGreaterThanOrEqual(2)
    expect(moved('http_refusals_total{code="student_not_found"}')).toBe(1)
    if (t.storage.engine === 'sqlite') expect(moved('sqlite_group_commit_batch_size_count')).toBeGreaterThanOrEqual(1)
    expect(moved('key_cache_hits_total')).toBeGreaterThanOrEqual(1)
  })

  it('keeps the series bounded and free of ids, keys and names, however many students are asked for', async () => {
    const read = bearer(t.fixtures.keys.read)
    const ask = async (n: number) => {
      for (let i = 0; i < n; i++) await t.send({ url: `/api/v1/students/${randomUUID()}/progress`, headers: read })
    }
    await ask(3)
    const count = (text: string) => [...samples(text).keys()].filter((s) => s.startsWith('http_')).length
    const first = count(await scrape())
    await ask(60)
    const text = await scrape()
    expect(count(text)).toBe(first)
    const values = labelValues(text)
    for (const value of values) {
      expect(value).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/)
      for (const key of Object.values(t.fixtures.keys)) expect(value).not.toContain(key)
      for (const name of ['Ada', 'Ben', 'Cleo', 'Dev']) expect(value).not.toContain(name)
    }
    expect(values).toContain('/api/v1/students/:id/progress')
  })
})

describe('GET /metrics without METRICS_TOKEN or METRICS_PORT', () => {
  it('is off: 404, as any unknown path', async () => {
    const t = await buildTestApp()
    try {
      expect(t.app.services.metrics).toBeUndefined()
      expect((await t.send({ url: '/metrics' })).statusCode).toBe(404)
    } finally {
      await t.close()
    }
  })

  it('stays off with METRICS=off, whatever else is set', async () => {
    const t = await buildTestApp({ env: { METRICS_TOKEN: TOKEN, METRICS: 'off' } })
    try {
      expect(t.app.services.metrics).toBeUndefined()
      expect((await t.send({ url: '/metrics', headers: scrapeHeaders })).statusCode).toBe(404)
    } finally {
      await t.close()
    }
  })
})
