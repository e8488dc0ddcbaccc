/**
 * The roster import's pages: the upload form, the preview with Confirm and Cancel, the problems,
 * and the result. Counts, school ids and file positions only: no child's name is ever shown here.
 */
import type { FastifyRequest } from 'fastify'
import { TIER_IDS } from '../../../../domain/tiers.js'
import { formatImportProblem, type ImportProblem } from '../../../../roster/oneroster.js'
import type {
  RosterCounts,
  RosterCoverage,
  RosterOutcome,
  RosterPreview,
} from '../../../../cases/roster-import/import.js'
import { KEPT_FIELDS, NEVER_KEPT } from '../../../../cases/roster-import/kept.js'
import { districtsLabel, linksEnding, sourceLabel } from '../../../../cases/roster-import/labels.js'
import { type Html, html } from '../../../html.js'
import { csrfField } from '../../../layout.js'
import { scrollTable, tableRow } from '../../../views/table.js'

const PAGE = '/dashboard/operator/roster'
const n = (value: number) => value.toLocaleString('en-US')

const kept = html`<p>${KEPT_FIELDS}</p><p>${NEVER_KEPT}</p>`

export function uploadBody(request: FastifyRequest, maxBytes: number, cancelled: boolean, error?: string): Html {
  const notice = cancelled
    ? html`<p class="notice" role="status">The upload was cancelled and its file removed; nothing was imported.</p>`
    : ''
  return html`${notice}<p>Upload a district's OneRoster 1.1 or 1.2 CSV export, bulk or delta, as one .zip file of
its CSV files (manifest.csv, orgs.csv, users.csv and, in 1.2, roles.csv). You see what it would change before
anything is written. For a folder, or from a script, use <code>curriculum roster import</code>.</p>
${kept}
<form method="post" action="${PAGE}" enctype="multipart/form-data" class="stack" novalidate>
  ${csrfField(request)}
  <div>
    <label for="tier">Tier of new students</label>
    <select id="tier" name="tier">${TIER_IDS.map((tier) => html`<option value="${tier}">${tier}</option>`)}</select>
  </div>
  <div>
    <label for="export">OneRoster export (.zip, at most ${n(Math.floor(maxBytes / 1024 / 1024))} MiB)</label>
    ${error === undefined ? '' : html`<p class="field-error" id="export-error">${error}</p>`}
    <input id="export" name="export" type="file" accept=".zip,application/zip" required${
      error === undefined ? '' : html` aria-invalid="true" aria-describedby="export-error"`
    }>
  </div>
  <div><button type="submit">Upload and preview</button></div>
</form>`
}

function countsTable(counts: RosterCounts, caption: string): Html {
  const { students, schools, attendance } = counts
  return scrollTable({
    caption,
    headings: ['What', 'Count'],
    rows: [
      tableRow(['New students', n(students.new)]),
      tableRow(['Changed students (first name or schools)', n(students.changed)]),
      tableRow(['Unchanged students', n(students.unchanged)]),
      tableRow(['Students no longer present (kept; they leave their schools)', n(students.noLongerPresent)]),
      tableRow(['Students to erase (tobedeleted in a delta)', n(students.toErase)]),
      tableRow(['Students another source listed first (their first name follows it)', n(students.keptByAnotherSource)]),
      tableRow(['New schools', n(schools.new)]),
      tableRow(['Changed schools', n(schools.changed)]),
      tableRow(['Unchanged schools', n(schools.unchanged)]),
      tableRow(['Schools removed (their students leave them)', n(schools.leaving)]),
      tableRow(['Students joining a school', n(attendance.joining)]),
      tableRow(['Students leaving a school', n(attendance.leaving)]),
    ],
  })
}

/**
 * The export's source and districts, then its schools with who joins and leaves each, then the
 * links each partner loses.
 */
function coverageSection(coverage: RosterCoverage, ending: boolean): Html {
  const { source, districts, schools, partners } = coverage
  const named = sourceLabel(source)
  const system =
    named === null
      ? html`The export's manifest names no source system (<code>source.systemCode</code>).`
      : html`Source system: <strong>${named}</strong>.`
  const district = districts.length === 0 ? '' : html` District: ${districtsLabel(districts)}.`
  const links =
    partners.length === 0
      ? html`<p>No partner's links end${ending ? '' : ' with this import'}.</p>`
      : scrollTable({
          caption: ending ? 'Partner links that end' : 'Partner links ended',
          headings: ['Partner', ending ? 'Links that end' : 'Links ended'],
          rows: partners.map((p) => tableRow([p.name, n(p.links)])),
        })
  return html`<p>${system}${district} The import speaks for these ${n(schools.length)} schools only: students of
other schools, districts and sources are not touched.</p>
${scrollTable({
  caption: 'Schools this export speaks for',
  headings: ['School', 'Id in the export', 'Students joining', 'Students leaving'],
  rows: schools.map((s) =>
    tableRow([
      s.removed
        ? `${s.name} (removed by the delta)`
        : s.withoutStudents
          ? `${s.name} (listed without students: they are left as they are)`
          : s.name,
      s.sourcedId,
      n(s.joining),
      n(s.leaving),
    ]),
  ),
})}
<h2>${ending ? 'Partners whose links end' : 'Partners whose links ended'}</h2>
<p>A link ends when a student leaves the last shared school, or share, through which a partner sees them; the
partner is told to delete what it holds of that student.</p>
${links}`
}

export function previewBody(request: FastifyRequest, token: string, fileName: string, preview: RosterPreview): Html {
  const { students } = preview
  const erase = students.toErase
  const ending = linksEnding(preview.coverage.partners)
  const absent =
    students.noLongerPresent === 0
      ? ''
      : html`<p>${n(students.noLongerPresent)} students of these schools the users file lacks are kept, and leave
the schools it lists (their other schools are kept), so the links those schools' shares made for them end. To
erase them, list their ids in a file and run <code>curriculum students erase --file ids.csv</code>.</p>`
  const erasing =
    erase === 0
      ? ''
      : html`<p class="warning"><strong>This delta erases ${n(erase)} ${erase === 1 ? 'student' : 'students'}</strong>
(marked tobedeleted): first name, progress and links, for good; each partner linked to them is told.</p>`
  return html`<p>Nothing is written until you confirm. <strong>${fileName}</strong>: OneRoster ${preview.version},
${preview.kind}; new students get the tier <strong>${preview.tier}</strong>. No problem was found.</p>
${countsTable(preview, 'What the import would change')}
${coverageSection(preview.coverage, true)}
${absent}${erasing}${kept}
<div class="row">
<form method="post" action="${PAGE}/${token}/confirm">
  ${csrfField(request)}
  ${erase === 0 ? '' : html`<input type="hidden" name="erase" value="yes">`}
  <button type="submit"${erase === 0 && ending === 0 ? '' : html` class="danger"`}>${
    erase > 0
      ? `Import and erase ${n(erase)} ${erase === 1 ? 'student' : 'students'}`
      : ending > 0
        ? `Import and end ${n(ending)} partner ${ending === 1 ? 'link' : 'links'}`
        : 'Confirm the import'
  }</button>
</form>
<form method="post" action="${PAGE}/${token}/cancel">
  ${csrfField(request)}
  <button type="submit" class="link">Cancel</button>
</form>
</div>`
}

export function problemsBody(problems: readonly ImportProblem[], more: number): Html {
  return html`<p>Nothing was imported. Fix these in the district's system or its export, then upload it again.
Each says the file, the line, the column and what is wrong; no value of a child is repeated here.</p>
<ul class="problems">${problems.map((problem) => html`<li><code>${formatImportProblem(problem)}</code></li>`)}</ul>
${more > 0 ? html`<p>And ${n(more)} more problems not shown.</p>` : ''}
<p><a href="${PAGE}">Upload an export</a></p>`
}

export function outcomeBody(outcome: RosterOutcome): Html {
  return html`<p class="notice" role="status">The roster was imported. The uploaded file is removed.</p>
${countsTable(outcome, 'What the import changed')}
${coverageSection(outcome.coverage, false)}
<p>Links to partners: ${n(outcome.links.made)} made, ${n(outcome.links.ended)} ended (each partner told);
${n(outcome.erased.length)} students erased; ${n(outcome.webhooks)} webhook deliveries queued.</p>
<p><a href="${PAGE}">Import another roster</a> · <a href="/dashboard/operator/audit">Audit log</a></p>`
}
