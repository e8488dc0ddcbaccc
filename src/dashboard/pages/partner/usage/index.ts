/** Requests per day for each of the partner's keys over the last 30 days, and how many were refused with 429. */
import { usageOf } from '../../../../storage/usage-repository.js'
import type { ApiKeyRow } from '../../../../storage/tables.js'
import type { PagePlugin } from '../../../dashboard-context.js'
import { type Html, html } from '../../../html.js'
import { sendPage } from '../../../send-page.js'
import { ownKeys, partnerView } from '../partner-view.js'
import { lastDays, usageChart } from './usage-chart.js'
import { partner } from '../../../page-roles.js'

function keyHeading(key: ApiKeyRow): Html {
  return html`<code>${key.display_prefix}\u2026</code> ${key.name} <span class="hint">(${key.mode})</span>`
}

export const usagePages: PagePlugin = async (app, { context }) => {
  const { storage, clock } = context

  app.get('/usage', partner, async (request, reply) => {
    const v = await partnerView(context, request)
    const keys = await ownKeys(context, v)
    const all = [...keys.live, ...keys.test]
    const days = lastDays(clock.now())
    await context.flushUsage()
    const counts = await usageOf(
      storage.db,
      all.map((key) => key.id),
      days[0]!,
    )
    const body =
      all.length === 0
        ? html`<p class="empty">You have no keys yet.</p>`
        : html`<p>Requests per day for each of your keys over the last 30 days (UTC),
and how many were refused with 429 (rate limit).</p>
${all.map(
  (
    key,
    index,
  ) => html`<section class="card" aria-labelledby="usage-${index}"><h2 id="usage-${index}">${keyHeading(key)}</h2>
${usageChart(
  `chart-${index}`,
  `key ${key.display_prefix}`,
  days,
  counts.filter((c) => c.keyId === key.id),
)}</section>`,
)}`
    return sendPage(request, reply, 'Usage', body, 200, '/dashboard/partner/usage')
  })
}
