/**
 * The partner's own disclosure log: every read or change of a student's data made with their
 * organisation's keys and their sandbox's, newest first, as the operator's log records it.
 */
import { listDisclosures } from '../../../../storage/disclosure-log.js'
import type { PagePlugin } from '../../../dashboard-context.js'
import { html } from '../../../html.js'
import { sendPage } from '../../../send-page.js'
import { scrollTable, tableRow } from '../../../views/table.js'
import { ownKeys, partnerView } from '../partner-view.js'

// Student ids: opened only from this dashboard.
const studentPage = { config: { dashboard: 'partner' as const, studentData: true as const } }

export const disclosurePages: PagePlugin = async (app, { context }) => {
  const db = context.storage.db

  app.get('/disclosures', studentPage, async (request, reply) => {
    const v = await partnerView(context, request)
    const organisations = [v.sandboxId, ...(v.organisation === undefined ? [] : [v.organisation.id])]
    const keys = await ownKeys(context, v)
    const prefixes = new Map([...keys.live, ...keys.test].map((key) => [key.id, `${key.display_prefix}…`]))
    const rows = (
      await Promise.all(organisations.map((organisationId) => listDisclosures(db, { organisationId, limit: 500 })))
    )
      .flat()
      .sort((a, b) => (a.at < b.at ? 1 : -1))
    const table = scrollTable({
      caption: 'Disclosure log',
      headings: ['When (UTC)', 'Key', 'Student', 'Action', 'Outcome', 'Request id'],
      rows: rows
        .slice(0, 500)
        .map((row) =>
          tableRow([
            row.at.replace('T', ' ').slice(0, 19),
            html`<code>${prefixes.get(row.key_id) ?? row.key_id}</code>`,
            html`<code>${row.student_id}</code>`,
            row.action,
            row.outcome,
            html`<code>${row.request_id}</code>`,
          ]),
        ),
    })
    const body =
      rows.length === 0
        ? html`<p class="empty">No student data has been read or changed with your keys yet.</p>`
        : html`<p>Every read or change of a student's data made with your organisation's keys (and your sandbox's),
newest first. The operator keeps the same record.</p>
${table}`
    return sendPage(request, reply, 'Disclosure log', body, 200, '/dashboard/partner/disclosures')
  })
}
