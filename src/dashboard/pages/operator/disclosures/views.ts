/**
 * The operator's disclosure log page: the filter form with its CSV link, one page of records, and
 * the link to older ones.
 */
import { DISCLOSURE_ACTIONS, type DisclosurePage } from '../../../../storage/disclosure-log.js'
import type { OrganisationRow } from '../../../../storage/tables.js'
import { field } from '../../../forms.js'
import { type Html, html } from '../../../html.js'
import { scrollTable, tableRow } from '../../../views/table.js'
import type { ParsedFilter } from './disclosure-filter.js'

export function disclosuresBody(
  { values, problems, before, filter }: ParsedFilter,
  page: DisclosurePage,
  organisations: readonly OrganisationRow[],
  schools: readonly { id: string; name: string }[],
): Html {
  const { rows, next } = page
  const names = new Map(organisations.map((o) => [o.id, o.name]))
  const query = new URLSearchParams(Object.entries(values).filter(([, v]) => v !== '')).toString()
  const chosen = (value: string, option: string) => (value === option ? html` selected` : '')
  const organisationOptions = organisations.map(
    (o) => html`<option value="${o.id}"${chosen(values.organisation ?? '', o.id)}>${o.name}</option>`,
  )
  const schoolOptions = schools.map(
    (school) => html`<option value="${school.id}"${chosen(values.school ?? '', school.id)}>${school.name}</option>`,
  )
  const actionOptions = DISCLOSURE_ACTIONS.map(
    (a) => html`<option value="${a}"${chosen(values.action ?? '', a)}>${a}</option>`,
  )
  const problemList =
    problems.length > 0
      ? html`<div class="error-summary" role="alert"><ul>${problems.map((p) => html`<li>${p}</li>`)}</ul></div>`
      : ''
  const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`
  const csvHref = `/dashboard/operator/disclosures.csv${query ? `?${query}` : ''}`
  // The district export: every record of the dates, organisation and school, oldest first, described.
  const rangeQuery = new URLSearchParams(
    ['since', 'until', 'organisation', 'school'].flatMap((name): [string, string][] =>
      values[name] ? [[name, values[name]!]] : [],
    ),
  ).toString()
  const exportHref = (format: string) =>
    `/dashboard/operator/disclosures/export.${format}${rangeQuery ? `?${rangeQuery}` : ''}`
  const olderHref = `/dashboard/operator/disclosures?${new URLSearchParams([
    ...Object.entries(values).filter(([, v]) => v !== ''),
    ['before', String(next)],
  ]).toString()}`
  const table = scrollTable({
    headings: ['When (UTC)', 'Organisation', 'Key', 'Student', 'Action', 'Outcome', 'Request id'],
    rows: rows.map((row) =>
      tableRow([
        row.at.replace('T', ' ').slice(0, 19),
        names.get(row.organisation_id) ?? row.organisation_id,
        html`<code>${row.key_id}</code>`,
        html`<a href="/dashboard/operator/students/${row.student_id}/disclosures"><code>${row.student_id}</code></a>`,
        row.action,
        row.outcome,
        html`<code>${row.request_id}</code>`,
      ]),
    ),
  })
  return html`<form method="get" action="/dashboard/operator/disclosures" class="stack">
  ${problemList}
  ${field('student', 'Student id', { value: values.student })}
  <div><label for="organisation">Organisation</label>
    <select id="organisation" name="organisation"><option value="">Any</option>${organisationOptions}</select></div>
  <div><label for="school">School (its students now, and erased ones who attended it)</label>
    <select id="school" name="school"><option value="">Any</option>${schoolOptions}</select></div>
  ${field('key', 'Key id', { value: values.key })}
  <div><label for="action">Action</label>
    <select id="action" name="action"><option value="">Any</option>${actionOptions}</select></div>
  ${field('since', 'From (inclusive)', { type: 'date', value: values.since })}
  ${field('until', 'To (inclusive)', { type: 'date', value: values.until })}
  <div class="row"><button type="submit">Filter</button> <a href="${csvHref}">Export these as CSV</a></div>
</form>
${
  filter.studentId !== undefined
    ? html`<p><a href="/dashboard/operator/students/${filter.studentId}/disclosures">Disclosure report for
this student</a>: every record, oldest first, with the agreements it was under, as a page, CSV or JSON.</p>`
    : ''
}
<p>District export of the dates, organisation and school chosen, oldest first, with who, what and under which
agreement, streamed however large: <a href="${exportHref('csv')}">CSV</a> or
<a href="${exportHref('json')}">JSON</a>.</p>
<p>${plural(rows.length, 'record')}${before === undefined ? ', newest first' : ' older than the previous page'}.</p>
${rows.length === 0 ? html`<p class="empty">No disclosure matches.</p>` : table}
${next === null ? '' : html`<p><a rel="next" href="${olderHref}">Older records</a></p>`}`
}
