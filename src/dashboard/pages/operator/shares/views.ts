/**
 * An organisation's shares as the operator sees them: the "Shared students" section of its page
 * (shares in force with their counts, and the forms that share a school or a list), the
 * confirmation before ending a share, and the page of shared students with the reason for each.
 * Ids, external ids and counts only: the operator acts on the ids a district gives.
 */
import type { FastifyRequest } from 'fastify'
import type { SchoolSummary } from '../../../../storage/school-repository.js'
import type { SharedStudent, ShareSummary } from '../../../../storage/share-listing-repository.js'
import type { OrganisationRow } from '../../../../storage/tables.js'
import { errorSummary, field, type FieldErrors, textarea } from '../../../forms.js'
import { type Html, html } from '../../../html.js'
import { csrfField } from '../../../layout.js'
import { utcMinute } from '../../../times.js'
import { ACTION_HEADING, scrollTable, tableRow } from '../../../views/table.js'

/** A refused share form, sent back with what was typed and what is wrong with it. */
export interface ShareForm {
  kind: 'school' | 'list'
  values: { school?: string; students?: string; label?: string }
  errors: FieldErrors
}

export interface SharesData {
  /** The organisation's shares, those in force first. */
  shares: readonly ShareSummary[]
  schools: readonly SchoolSummary[]
  /** Students linked to the organisation. */
  linked: number
}

const kindText = (kind: string) => (kind === 'school' ? 'School' : 'List')

/** What the share just made or ended means, found in the data by the id in the address. */
function shareNotice(request: FastifyRequest, shares: readonly ShareSummary[]): Html {
  const query = request.query as Record<string, unknown>
  const made = shares.find((s) => s.id === query.shared && s.endedAt === null)
  if (made !== undefined)
    return html`<p class="notice" role="status">${kindText(made.kind)} share \u201c${made.label}\u201d made: it holds
${made.students} student${made.students === 1 ? '' : 's'}, each linked.</p>`
  const ended = shares.find((s) => s.id === query.ended && s.endedAt !== null)
  if (ended !== undefined)
    return html`<p class="notice" role="status">The share \u201c${ended.label}\u201d ended. Its students that no
other share holds were unlinked, and the organisation was told to delete their data
(<code>student.unlinked</code>).</p>`
  return html``
}

function schoolForm(request: FastifyRequest, base: string, data: SharesData, form: ShareForm | undefined): Html {
  const shared = new Set(data.shares.filter((s) => s.endedAt === null && s.kind === 'school').map((s) => s.schoolId))
  const open = data.schools.filter((school) => !shared.has(school.id))
  if (data.schools.length === 0)
    return html`<p class="empty">No school yet: <a href="/dashboard/operator/schools">add one</a>, or import a
roster.</p>`
  if (open.length === 0) return html`<p class="empty">Every school is shared with this organisation.</p>`
  const errors = form?.kind === 'school' ? form.errors : {}
  const chosen = form?.kind === 'school' ? form.values.school : undefined
  const error = errors.school
  return html`<form method="post" action="${base}/shares/school" class="stack" novalidate>
  ${csrfField(request)}
  <div>
    <label for="school">School</label>
    <p class="hint" id="school-hint">Its students now, and every student who joins it later, are linked.</p>
    ${error === undefined ? '' : html`<p class="field-error" id="school-error">${error}</p>`}
    <select id="school" name="school" aria-describedby="school-hint${error === undefined ? '' : ' school-error'}"${
      error === undefined ? '' : html` aria-invalid="true"`
    }>${open.map(
      (school) =>
        html`<option value="${school.id}"${school.id === chosen ? html` selected` : ''}>${school.name}${
          school.identifier === null ? '' : ` (${school.identifier})`
        }, ${school.students} student${school.students === 1 ? '' : 's'}</option>`,
    )}</select>
  </div>
  <div><button type="submit">Share the school</button></div>
</form>`
}

function listForm(request: FastifyRequest, base: string, form: ShareForm | undefined): Html {
  const errors = form?.kind === 'list' ? form.errors : {}
  const values = form?.kind === 'list' ? form.values : {}
  return html`<form method="post" action="${base}/shares/list" class="stack" novalidate>
  ${csrfField(request)}
  ${textarea('students', 'Students', {
    value: values.students ?? '',
    hint:
      'One student id or external id a line; a few hundred at most here. ' +
      'For a longer list: curriculum links add --file.',
    required: true,
    errors,
  })}
  ${field('label', 'Label', {
    value: values.label ?? '',
    hint: 'Why they are shared, e.g. "Reading club".',
    required: true,
    errors,
  })}
  <div><button type="submit">Share the list</button></div>
</form>`
}

/** The "Shared students" section of an organisation's page. */
export function sharedStudentsSection(
  request: FastifyRequest,
  o: OrganisationRow,
  data: SharesData,
  form: ShareForm | undefined,
): Html {
  const base = `/dashboard/operator/organisations/${o.id}`
  const inForce = data.shares.filter((s) => s.endedAt === null)
  const table = scrollTable({
    caption: `Shares in force with ${o.name}`,
    headings: ['Kind', 'School or label', 'Students', 'Made (UTC)', ACTION_HEADING],
    rows: inForce.map((s) =>
      tableRow([
        kindText(s.kind),
        s.label,
        String(s.students),
        utcMinute(s.createdAt),
        html`<a class="button danger" href="${base}/shares/${s.id}/end" aria-label="End share ${s.label}\u2026">End
share\u2026</a>`,
      ]),
    ),
  })
  return html`<h2 id="shares">Shared students</h2>
${shareNotice(request, data.shares)}
${form === undefined ? '' : errorSummary(form.errors)}
<p>${data.linked} student${data.linked === 1 ? '' : 's'} linked to ${o.name}, each through a share: a school (its
students now and later) or a list. <a href="${base}/shared">Shared students and why</a> ·
<a href="${base}/students">Students linked to ${o.name}</a>, to unlink one from every share.</p>
${inForce.length === 0 ? html`<p class="empty">No share in force: no student is shared.</p>` : table}
<h3>Share a school</h3>
${schoolForm(request, base, data, form)}
<h3>Share a list of students</h3>
${listForm(request, base, form)}`
}

export function endShareConfirmBody(
  request: FastifyRequest,
  o: OrganisationRow,
  share: ShareSummary,
  unlinking: number,
): Html {
  const base = `/dashboard/operator/organisations/${o.id}`
  if (share.endedAt !== null)
    return html`<p>The share \u201c${share.label}\u201d ended on ${utcMinute(share.endedAt)}: nothing to do.</p>
<p><a href="${base}#shares">Back to ${o.name}</a></p>`
  return html`<p>You are about to end the ${share.kind} share \u201c<strong>${share.label}</strong>\u201d with
<strong>${o.name}</strong>. It holds ${share.students} student${share.students === 1 ? '' : 's'}.</p>
<ul>
  <li>${unlinking} of them no other share holds: they are unlinked. Its keys get <strong>404</strong> for them at
  once, and its change feed and webhooks get a <code>student.unlinked</code> notice for each (the id only), telling it
  to delete its copy.</li>
  <li>The others stay linked through their other shares.</li>
  ${share.kind === 'school' ? html`<li>Students who join the school later are no longer linked.</li>` : ''}
</ul>
<form method="post" action="${base}/shares/${share.id}/end" class="row">
  ${csrfField(request)}
  <button type="submit" class="danger">End the share</button>
  <a href="${base}#shares">Cancel, keep it</a>
</form>`
}

function reasonsText(student: SharedStudent): Html {
  if (student.reasons.length === 0) return html`<span class="empty">no share</span>`
  return html`${student.reasons.map((r, i) => html`${i === 0 ? '' : html`<br>`}${kindText(r.kind)}: ${r.label}`)}`
}

export function sharedStudentsPageBody(
  o: OrganisationRow,
  page: { students: readonly SharedStudent[]; next: string | null },
): Html {
  const base = `/dashboard/operator/organisations/${o.id}`
  const table = scrollTable({
    caption: `Students shared with ${o.name}, and why`,
    headings: ['Student id', 'External id', 'Linked (UTC)', 'Shared by'],
    rows: page.students.map((s) =>
      tableRow([html`<code>${s.id}</code>`, s.externalId ?? '', utcMinute(s.linkedAt), reasonsText(s)]),
    ),
  })
  return html`<p>The students whose data ${o.name}'s keys and webhooks reach, by id, with the shares that hold
each. <a href="${base}#shares">Back to ${o.name}</a></p>
${page.students.length === 0 ? html`<p class="empty">No student is shared with ${o.name}.</p>` : table}
${page.next === null ? '' : html`<p><a rel="next" href="${base}/shared?after=${page.next}">Next students</a></p>`}`
}
