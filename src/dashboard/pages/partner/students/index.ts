/**
 * A live partner's linked students: first name, tier, id (with a copy button) and last change,
 * searchable by first name or id, 100 a page in id order. Showing them is a disclosure like the
 * API's roster: every student listed gets a row in the disclosure log (key column
 * `dashboard:<account id>`), so a page is shown only while an agreement is in force.
 */
import { randomUUID } from 'node:crypto'
import { UUID } from '../../../../domain/uuid.js'
import { agreementWindow, isAgreementActive } from '../../../../domain/agreements.js'
import { listAgreements } from '../../../../storage/access-repository.js'
import { readRoster } from '../../../../cases/roster-read.js'
import type { PagePlugin } from '../../../dashboard-context.js'
import { text } from '../../../forms.js'
import { html } from '../../../html.js'
import { sendPage } from '../../../send-page.js'
import { utcMinute } from '../../../times.js'
import { scrollTable, tableRow } from '../../../views/table.js'

const PAGE = 100

export const studentPages: PagePlugin = async (app, { context }) => {
  const { storage, clock } = context
  // Children's names: opened only from this dashboard, so no other site can cause a disclosure.
  const studentPage = { config: { dashboard: 'partner' as const, studentData: true as const } }

  app.get('/students', studentPage, async (request, reply) => {
    const account = request.account!
    const query = request.query as Record<string, string | undefined>
    const search = text(query, 'q')
    const after = typeof query.after === 'string' && UUID.test(query.after) ? query.after.toLowerCase() : undefined
    const now = clock.now()
    const organisationId = account.organisation_id
    const agreements = organisationId === null ? [] : await listAgreements(storage.db, organisationId)
    const agreed = isAgreementActive(
      agreements.map((a) => agreementWindow(a.signed_at, a.expires_at, a.ended_at)),
      now,
    )
    if (organisationId === null || !agreed) {
      const why =
        organisationId === null
          ? 'Your organisation’s students appear here once your application is approved.'
          : 'Your organisation’s students appear here while a data-sharing agreement is in force.'
      const overview = html`<a href="/dashboard/partner">overview</a>`
      const body = html`<p>${why} Your sandbox\u2019s made-up students are on the ${overview}.</p>`
      return sendPage(request, reply, 'Students', body, 200, '/dashboard/partner/students')
    }
    const page = await readRoster(
      storage.writes,
      { at: now, requestId: randomUUID(), keyId: `dashboard:${account.id}`, organisationId, sandbox: false },
      { limit: PAGE, after, search: search === '' ? undefined : search },
    )
    const nextHref = `/dashboard/partner/students?${new URLSearchParams({
      ...(search === '' ? {} : { q: search }),
      after: page.next ?? '',
    }).toString()}`
    const table = scrollTable({
      caption: 'Your organisation’s students',
      headings: ['First name', 'Tier', 'Student id', 'Last change (UTC)'],
      rows: page.students.map((s) =>
        tableRow([s.firstName, s.tier, html`<code data-copy>${s.id}</code>`, utcMinute(s.updatedAt)]),
      ),
    })
    const body = html`<form method="get" action="/dashboard/partner/students" class="row" role="search">
  <label for="q">First name or id</label> <input id="q" name="q" type="search" value="${search}">
  <button type="submit">Search</button>
</form>
<p>Every student listed here is recorded in the disclosure log, as a request to the API would be.</p>
${page.students.length === 0 ? html`<p class="empty">No linked student matches.</p>` : table}
${page.next === null ? '' : html`<p><a rel="next" href="${nextHref}">Next students</a></p>`}`
    return sendPage(request, reply, 'Students', body, 200, '/dashboard/partner/students')
  })
}
