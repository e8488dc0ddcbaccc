/**
 * The registry on its own: what modules announce reaches it only while it listens, the
 * scrape-time gauges answer from storage, and closing stops the counting.
 */
import { describe, expect, it } from 'vitest'
import { recordBatch, recordDelivery, recordRequest } from '../../src/instrumentation/metrics-channels.js'
import { Metrics } from '../../src/observability/metrics.js'
import { createTestStorage } from '../helper.js'
import { perTest } from '../support/built.js'

function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

describe('Metrics', () => {
  const storage = perTest(() => createTestStorage())

  it('counts what is announced while it listens, and nothing once closed', async () => {
    const metrics = new Metrics(storage)
    recordDelivery('delivered')
    recordDelivery('unreachable')
    recordBatch(3)
    recordRequest('/api/v1/tiers', 'GET', 503, 2)
    let text = (await metrics.scrape()).text
    expect(value(text, 'webhook_deliveries_total{outcome="delivered"}')).toBe(1)
    expect(value(text, 'webhook_deliveries_total{outcome="unreachable"}')).toBe(1)
    expect(value(text, 'sqlite_group_commit_batch_size_sum')).toBe(3)
    expect(value(text, 'http_requests_total{route="/api/v1/tiers",method="GET",status_class="5xx"}')).toBe(1)
    metrics.close()
    recordDelivery('delivered')
    text = (await metrics.scrape()).text
    expect(value(text, 'webhook_deliveries_total{outcome="delivered"}')).toBe(1)
  })

  it('reads the change feed and the outbox backlog from storage at each scrape', async () => {
    const metrics = new Metrics(storage)
    try {
      const text = (await metrics.scrape()).text
      expect(value(text, 'webhook_outbox_pending')).toBe(0)
      expect(value(text, 'change_feed_rows')).toBeGreaterThanOrEqual(0)
    } finally {
      metrics.close()
    }
  })

  it('times request-time writes and counts the failed ones', async () => {
    const metrics = new Metrics(storage)
    try {
      const writes = metrics.meter(storage.writes)
      await writes.statement(async () => 1)
      await expect(
        writes.transaction(async () => {
          throw new Error('refused')
        }),
      ).rejects.toThrow('refused')
      const text = (await metrics.scrape()).text
      expect(value(text, `storage_write_duration_seconds_count{engine="${storage.engine}"}`)).toBe(1)
      expect(value(text, `storage_write_errors_total{engine="${storage.engine}"}`)).toBe(1)
    } finally {
      metrics.close()
    }
  })
})
