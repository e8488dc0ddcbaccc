/**
 * The request log page, the partner's and the operator's: the box that finds a request by its id
 * (first, since a pasted id is what most visits bring), the entry it found, the filters, one page
 * of entries newest first and the link to older ones.
 */
import type { RequestLogPageView, ShownEntry } from '../../cases/request-log.js'
import { PROBLEM_CODES } from '../../errors.js'
import { field } from '../forms.js'
import { type Html, html } from '../html.js'
import { type ParsedRequestLogQuery, STATUS_CLASSES, UNMATCHED_ROUTE } from '../request-log-query.js'
import { utcSecond } from '../times.js'
import { scrollTable, tableRow } from './table.js'

export interface RequestLogPageSpec {
  /** The page's own path. */
  path: string
  intro: Html
  parsed: ParsedRequestLogQuery
  page: RequestLogPageView
  /** The entry the asked request id found; null when it found none, undefined when none was asked. */
  found: ShownEntry | null | undefined
  /** The keys a partner may filter by (the operator types a key id instead). */
  keys?: readonly { id: string; label: string }[]
  routes: readonly string[]
  /** The organisations the operator may filter by; a partner's page has no such column or filter. */
  organisations?: readonly { id: string; name: string }[]
}

function keyCell(entry: ShownEntry): Html {
  return entry.keyPrefix === undefined
    ? html`<code>${entry.keyId}</code>`
    : html`<code>${entry.keyPrefix}\u2026</code> ${entry.keyName}`
}

function problemCell(entry: ShownEntry): Html | string {
  return entry.problem === null ? '' : html`<a href="/docs/errors#${entry.problem}"><code>${entry.problem}</code></a>`
}

const requestCell = (entry: ShownEntry) => html`${entry.method} <code>${entry.route}</code>`

function foundEntry(spec: RequestLogPageSpec): Html | string {
  const { found, parsed } = spec
  if (found === undefined) return ''
  if (found === null)
    return html`<p class="notice" role="status" id="entry">No request with the id <code>${parsed.requestId}</code>
was answered to ${spec.organisations === undefined ? 'your keys' : 'any key'} in the last 7 days.</p>`
  const line = (term: string, value: unknown) => html`<dt>${term}</dt><dd>${value}</dd>`
  return html`<section class="card" id="entry" tabindex="-1" aria-labelledby="entry-heading">
<h2 id="entry-heading">Request <code>${found.requestId}</code></h2>
<dl>
${line('When', utcSecond(found.at))}
${spec.organisations === undefined ? '' : line('Organisation', found.organisationName ?? found.organisationId)}
${line('Key', keyCell(found))}
${line('Request', requestCell(found))}
${line('Status', found.status)}
${line('Problem', found.problem === null ? 'none' : problemCell(found))}
${line('Latency', `${found.latencyMs} ms`)}
${line('Client address', found.address)}
</dl>
</section>`
}

function select(name: string, label: string, chosen: string, options: readonly (readonly [string, string])[]): Html {
  return html`<div><label for="${name}">${label}</label>
<select id="${name}" name="${name}"><option value="">Any</option>${options.map(
    ([value, text]) => html`<option value="${value}"${value === chosen ? html` selected` : ''}>${text}</option>`,
  )}</select></div>`
}

function filters(spec: RequestLogPageSpec): Html {
  const { values } = spec.parsed
  const routes = [...spec.routes, UNMATCHED_ROUTE].map((route) => [route, route] as const)
  return html`<form method="get" action="${spec.path}" class="stack" aria-label="Filter the entries">
${
  spec.organisations === undefined
    ? ''
    : select(
        'organisation',
        'Organisation',
        values.organisation ?? '',
        spec.organisations.map((o) => [o.id, o.name]),
      )
}
${
  spec.keys === undefined
    ? field('key', 'Key id', { value: values.key })
    : select(
        'key',
        'Key',
        values.key ?? '',
        spec.keys.map((k) => [k.id, k.label]),
      )
}
${select(
  'status',
  'Status',
  values.status ?? '',
  STATUS_CLASSES.map((c) => [c, c]),
)}
${select(
  'problem',
  'Problem code',
  values.problem ?? '',
  PROBLEM_CODES.map((c) => [c, c]),
)}
${select('route', 'Route', values.route ?? '', routes)}
<div class="row"><button type="submit">Filter</button> <a href="${spec.path}">Clear the filters</a></div>
</form>`
}

export function requestLogBody(spec: RequestLogPageSpec): Html {
  const { parsed, page, path } = spec
  const operator = spec.organisations !== undefined
  const problems =
    parsed.problems.length === 0
      ? ''
      : html`<div class="error-summary" role="alert"><ul>${parsed.problems.map((p) => html`<li>${p}</li>`)}</ul></div>`
  const kept = Object.entries(parsed.values).filter(([name, value]) => name !== 'request' && value !== '')
  const olderHref = `${path}?${new URLSearchParams([...kept, ['before', String(page.next)]]).toString()}`
  const table = scrollTable({
    caption: 'Request log',
    headings: [
      'When (UTC)',
      ...(operator ? ['Organisation'] : []),
      'Key',
      'Request',
      'Status',
      'Problem',
      'Latency (ms)',
      'Client address',
      'Request id',
    ],
    rows: page.entries.map((entry) =>
      tableRow([
        utcSecond(entry.at, false),
        ...(operator ? [entry.organisationName ?? entry.organisationId] : []),
        keyCell(entry),
        requestCell(entry),
        entry.status,
        problemCell(entry),
        entry.latencyMs,
        entry.address,
        html`<a href="${path}?request=${entry.requestId}#entry"><code>${entry.requestId}</code></a>`,
      ]),
    ),
  })
  return html`${spec.intro}
${problems}
<form method="get" action="${path}#entry" class="stack" role="search" aria-label="Find a request">
${field('request', 'Request id', {
  value: parsed.values.request,
  hint: 'The "requestId" of a problem response, or the X-Request-Id header of any answer.',
})}
<div class="row"><button type="submit">Find the request</button></div>
</form>
${foundEntry(spec)}
<h2>Entries</h2>
${filters(spec)}
<p>${page.entries.length} ${page.entries.length === 1 ? 'entry' : 'entries'}, newest first${
    parsed.query.before === undefined ? '' : ', older than the previous page'
  }.</p>
${page.entries.length === 0 ? html`<p class="empty">No entry matches.</p>` : table}
${page.next === null ? '' : html`<p><a rel="next" href="${olderHref}">Older entries</a></p>`}`
}
