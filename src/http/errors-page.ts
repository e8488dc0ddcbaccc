/**
 * The error catalogue, /docs/errors: a table of every code, then a section per code whose id is
 * the code, so that each problem's `type` (`/docs/errors#<code>`) lands on what caused it and
 * what to do. Everything comes from the catalogue in errors.ts.
 */
import { escapeHtml } from '../domain/html-escape.js'
import { PROBLEM_CATALOG, PROBLEM_CODES, type ProblemCode } from '../errors.js'
import { renderInline } from './markdown.js'
import { DOCS_NAV } from './docs-nav.js'
import { layout } from './reference-page.js'

function summaryRow(code: ProblemCode): string {
  const entry = PROBLEM_CATALOG[code]
  const cells = [
    `<a href="#${code}"><code>${code}</code></a>`,
    String(entry.status),
    escapeHtml(entry.title),
    renderInline(entry.description),
  ]
  return `<tr>${cells.map((cell) => `<td>${cell}</td>`).join('')}</tr>`
}

function section(code: ProblemCode): string {
  const entry = PROBLEM_CATALOG[code]
  return `<section class="problem" id="${code}" aria-labelledby="${code}-title">
<h2 id="${code}-title"><code>${code}</code> <small>${entry.status} ${escapeHtml(entry.title)}</small></h2>
<h3>Cause</h3>
<p class="cause">${renderInline(entry.cause)}</p>
<h3>Fix</h3>
<p class="fix">${renderInline(entry.fix)}</p>
</section>`
}

export function renderErrorsPage(): string {
  const rows = PROBLEM_CODES.map(summaryRow).join('\n')
  return layout(
    'Curriculum API errors',
    `${DOCS_NAV}
<h1>Error catalogue</h1>
<p>Every error response is <code>application/problem+json</code> (RFC 9457). Its <code>type</code> links to the
code's section below, with the cause and what to do. The <code>code</code> field is stable: a published code keeps
its meaning and status and is never reused, and new codes may be added
(<a href="/docs/versioning">versioning</a>): treat a code you do not know by its HTTP status.
Quote the <code>requestId</code> to the operator.</p>
<table><thead><tr><th>code</th><th>Status</th><th>Title</th><th>When</th></tr></thead><tbody>
${rows}
</tbody></table>
${PROBLEM_CODES.map(section).join('\n')}`,
  )
}
