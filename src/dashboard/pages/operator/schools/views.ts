/** The schools page: every school with its counts, and the form that adds one by hand. */
import type { FastifyRequest } from 'fastify'
import type { SchoolSummary } from '../../../../storage/school-repository.js'
import { errorSummary, field, type FieldErrors } from '../../../forms.js'
import { type Html, html } from '../../../html.js'
import { csrfField } from '../../../layout.js'
import { utcDay } from '../../../times.js'
import { scrollTable, tableRow } from '../../../views/table.js'

export interface SchoolForm {
  values: { name: string; identifier: string }
  errors: FieldErrors
}

export function schoolsBody(
  request: FastifyRequest,
  schools: readonly SchoolSummary[],
  form: SchoolForm | undefined,
): Html {
  const added = schools.find((s) => s.id === (request.query as Record<string, unknown>).added)
  const notice =
    added === undefined
      ? ''
      : html`<p class="notice" role="status">School ${added.name} was added. Record who attends it with
<code>curriculum schools members import</code> or a roster import, and share it from an organisation's page.</p>`
  const table = scrollTable({
    caption: 'Schools',
    headings: [
      'School',
      'Identifier',
      'External id',
      'Source (district)',
      'Students',
      'Shares in force',
      'Added (UTC)',
    ],
    rows: schools.map((s) =>
      tableRow([
        s.name,
        s.identifier ?? '',
        s.externalId ?? '',
        s.source === null
          ? s.externalId === null
            ? 'added here'
            : 'not known'
          : `${s.source}${s.district === null ? '' : ` (${s.district})`}`,
        String(s.students),
        String(s.shares),
        utcDay(s.createdAt),
      ]),
    ),
  })
  const values = form?.values ?? { name: '', identifier: '' }
  const errors = form?.errors ?? {}
  return html`${notice}<p>The schools students attend, from a district's roster or added here. Sharing a school
with an organisation (on the organisation's page) links its students, and those who join it later.</p>
${schools.length === 0 ? html`<p class="empty">No school yet.</p>` : table}
<h2>Add a school</h2>
${errorSummary(errors)}
<form method="post" action="/dashboard/operator/schools" class="stack" novalidate>
  ${csrfField(request)}
  ${field('name', 'Name', { value: values.name, required: true, errors, hint: 'As people know it; unique.' })}
  ${field('identifier', 'Identifier (optional)', { value: values.identifier, errors, hint: "The school's own code." })}
  <div><button type="submit">Add the school</button></div>
</form>`
}
