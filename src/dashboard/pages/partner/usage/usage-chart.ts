/**
 * Requests per day for the last 30 days as a server-rendered SVG bar chart (429s drawn in a
 * second colour on top of the accepted ones), with the same figures as a table for screen
 * readers and for copying. SVG attributes, not CSS, so the strict CSP holds.
 */
import type { DailyCount } from '../../../../storage/usage-repository.js'
import { type Html, html } from '../../../html.js'
import { scrollTable, tableRow } from '../../../views/table.js'

const WIDTH = 760
const HEIGHT = 220
const LEFT = 48
const BOTTOM = 28
const TOP = 12

export function lastDays(now: number, count = 30): string[] {
  const days: string[] = []
  for (let i = count - 1; i >= 0; i--) days.push(new Date(now - i * 86_400_000).toISOString().slice(0, 10))
  return days
}

/** A round number at or above `max`, for the top of the axis. */
function niceCeiling(max: number): number {
  if (max <= 10) return 10
  const magnitude = 10 ** Math.floor(Math.log10(max))
  for (const step of [1, 2, 5, 10]) if (step * magnitude >= max) return step * magnitude
  return 10 * magnitude
}

export function usageChart(id: string, label: string, days: readonly string[], counts: readonly DailyCount[]): Html {
  const byDay = new Map(counts.map((count) => [count.day, count]))
  const series = days.map((day) => ({
    day,
    requests: byDay.get(day)?.requests ?? 0,
    throttled: byDay.get(day)?.throttled ?? 0,
  }))
  const total = series.reduce((sum, d) => sum + d.requests, 0)
  const totalThrottled = series.reduce((sum, d) => sum + d.throttled, 0)
  const top = niceCeiling(Math.max(...series.map((d) => d.requests)))
  const plotWidth = WIDTH - LEFT - 8
  const plotHeight = HEIGHT - TOP - BOTTOM
  const slot = plotWidth / series.length
  const y = (value: number) => TOP + plotHeight - (value / top) * plotHeight
  /** A bar from `from` up to `to` (request counts), in one of the chart's two colours. */
  const rect = (x: number, w: number, from: number, to: number, fill: string) =>
    html`<rect x="${x.toFixed(1)}" y="${y(to).toFixed(1)}" width="${w.toFixed(1)}"
 height="${(y(from) - y(to)).toFixed(1)}" fill="${fill}"></rect>`
  const bars = series.map((d, i) => {
    const x = LEFT + i * slot + 2
    const w = Math.max(1, slot - 4)
    const accepted = d.requests - d.throttled
    return html`<g><title>${d.day}: ${d.requests} requests, ${d.throttled} refused with 429</title>
${rect(x, w, 0, accepted, '#0a4fa8')}
${rect(x, w, accepted, d.requests, '#b3261e')}</g>`
  })
  const ticks = [0, top / 2, top].map((value) => {
    const at = y(value).toFixed(1)
    return html`<line x1="${LEFT}" x2="${WIDTH - 8}" y1="${at}" y2="${at}" stroke="#c9d1d9"></line>
<text x="${LEFT - 6}" y="${(y(value) + 4).toFixed(1)}" text-anchor="end" font-size="11" fill="#4d5560">${value}</text>`
  })
  const labels = [0, Math.floor(series.length / 2), series.length - 1].map(
    (i) =>
      html`<text x="${(LEFT + i * slot + slot / 2).toFixed(1)}" y="${HEIGHT - 8}" text-anchor="middle"
 font-size="11" fill="#4d5560">${series[i]!.day.slice(5)}</text>`,
  )
  return html`<figure>
<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="${id}-title ${id}-desc"
 xmlns="http://www.w3.org/2000/svg">
<title id="${id}-title">Requests per day with ${label}</title>
<desc id="${id}-desc">${total} requests in the last ${series.length} days,
${totalThrottled} of them refused with 429.</desc>
${ticks}${bars}${labels}
</svg>
<figcaption>${total} requests in ${series.length} days; <span class="legend-accepted">blue: accepted</span>,
<span class="legend-throttled">red: refused with 429</span> (${totalThrottled}).</figcaption>
</figure>
<details><summary>Figures by day</summary>
${scrollTable({
  headings: ['Day', 'Requests', '429s'],
  rows: series.filter((d) => d.requests > 0).map((d) => tableRow([d.day, d.requests, d.throttled])),
})}
</details>`
}
