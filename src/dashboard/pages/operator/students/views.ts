/**
 * The operator's student pages: an organisation's linked students with a way to unlink each, the
 * confirmation of an unlink, and erasing a student (found by id, confirmed by typing the id).
 * Ids, tiers and counts only: the operator acts on the ids a school gives.
 */
import type { FastifyRequest } from 'fastify'
import type { LinkedStudent, StudentSummary } from '../../../../storage/linked-student-repository.js'
import type { OrganisationRow } from '../../../../storage/tables.js'
import { type Html, html } from '../../../html.js'
import { csrfField } from '../../../layout.js'
import { utcMinute } from '../../../times.js'
import { ACTION_HEADING, scrollTable, tableRow } from '../../../views/table.js'

const organisationBase = (o: OrganisationRow) => `/dashboard/operator/organisations/${o.id}`

export function linkedStudentsBody(
  o: OrganisationRow,
  page: { students: readonly LinkedStudent[]; next: string | null },
  unlinked: string | undefined,
): Html {
  const base = organisationBase(o)
  const notice =
    unlinked === undefined
      ? ''
      : html`<p class="notice" role="status">Student <code>${unlinked}</code> was unlinked; ${o.name} is told
to delete its copy (change feed and webhook <code>student.unlinked</code>).</p>`
  const table = scrollTable({
    caption: `Students linked to ${o.name}`,
    headings: ['Student id', 'Tier', 'Linked (UTC)', ACTION_HEADING],
    rows: page.students.map((s) =>
      tableRow([
        html`<code>${s.id}</code>`,
        s.tier,
        utcMinute(s.linkedAt),
        html`<a href="${base}/students/${s.id}/unlink">Unlink<span class="visually-hidden"> ${s.id}</span>\u2026</a>
<a href="/dashboard/operator/students?id=${s.id}">Erase<span class="visually-hidden"> ${s.id}</span>\u2026</a>`,
      ]),
    ),
  })
  return html`${notice}<p>The students whose data ${o.name}'s keys and webhooks reach, by id.
<a href="${base}">Back to ${o.name}</a></p>
${page.students.length === 0 ? html`<p class="empty">No student is linked to ${o.name}.</p>` : table}
${page.next === null ? '' : html`<p><a rel="next" href="${base}/students?after=${page.next}">Next students</a></p>`}`
}

export function unlinkConfirmBody(request: FastifyRequest, o: OrganisationRow, studentId: string): Html {
  const base = organisationBase(o)
  return html`<p>You are about to unlink student <code>${studentId}</code> from <strong>${o.name}</strong>.</p>
<ul>
  <li>Its keys get <strong>404 student_not_found</strong> for the student at once, and deliveries about the
  student still queued for its webhooks are not sent.</li>
  <li>Its change feed gets a <code>student_unlinked</code> notice and its endpoints that subscribed a
  <code>student.unlinked</code> webhook, with the student's id only: they tell it to delete its copy.</li>
  <li>The student, their progress and their other links stay. Linking again takes an import.</li>
</ul>
<form method="post" action="${base}/students/${studentId}/unlink" class="row">
  ${csrfField(request)}
  <button type="submit" class="danger">Unlink the student</button>
  <a href="${base}/students">Cancel</a>
</form>`
}

function findForm(id: string): Html {
  return html`<form method="get" action="/dashboard/operator/students" class="row" role="search">
  <label for="id">Student id or district id</label> <input id="id" name="id" type="search" value="${id}">
  <button type="submit">Find</button>
</form>`
}

/** The erase page: a search by id, and for a student found, what erasing removes and the confirmation. */
export function erasePageBody(
  request: FastifyRequest,
  query: { id: string; erased?: string; error?: string },
  found: StudentSummary | undefined,
): Html {
  const erased =
    query.erased === undefined
      ? ''
      : html`<p class="notice" role="status">Student <code>${query.erased}</code> was erased. Each organisation it
was linked to is told to delete its copy (change feed and webhook <code>student.deleted</code>).</p>`
  const intro = html`<p>Erasing deletes a student's first name, progress, links and change history in one step,
and clears the webhook deliveries about them. The disclosure log keeps its rows, with the id only. It cannot be
undone. For many students at once use <code>curriculum students erase --file ids.csv</code>.</p>`
  if (query.id === '') return html`${erased}${intro}${findForm('')}`
  if (found === undefined)
    return html`${erased}${intro}${findForm(query.id)}<p class="empty">No student has the id or district id
<code>${query.id}</code> (never stored, or erased already).</p>`
  if (found.sandbox)
    return html`${intro}${findForm(query.id)}<p>Student <code>${found.id}</code> is a sandbox (made-up) student:
it is regenerated with its sandbox and cannot be erased here.</p>`
  const links =
    found.organisations.length === 0
      ? html`no organisation`
      : found.organisations.map((o, i) => html`${i === 0 ? '' : ', '}<strong>${o.name}</strong>`)
  const error = query.error === undefined ? '' : html`<p class="field-error" id="confirm-error">${query.error}</p>`
  return html`${intro}${findForm(query.id)}
<h2>Erase student <code>${found.id}</code>?</h2>
<p>${found.externalId === null ? '' : html`District id <code>${found.externalId}</code>. `}Linked to ${links}; ${
    found.progressEntries
  } progress ${found.progressEntries === 1 ? 'entry' : 'entries'}.
<a href="/dashboard/operator/students/${found.id}/disclosures">Disclosure report</a>.</p>
<form method="post" action="/dashboard/operator/students/erase" class="stack" novalidate>
  ${csrfField(request)}
  <input type="hidden" name="id" value="${found.id}">
  <div>
    <label for="confirm">Type the student id to confirm</label>
    ${error}
    <input id="confirm" name="confirm" type="text" autocomplete="off" required${
      query.error === undefined ? '' : html` aria-invalid="true" aria-describedby="confirm-error"`
    }>
  </div>
  <div><button type="submit" class="danger">Erase the student</button></div>
</form>`
}
