/** The audit log: the latest operator actions, newest first. */
import { listAudit } from '../../../../storage/audit-repository.js'
import type { PagePlugin } from '../../../dashboard-context.js'
import { html } from '../../../html.js'
import { sendPage } from '../../../send-page.js'
import { scrollTable, tableRow } from '../../../views/table.js'

// Student ids (the export filters the log records): opened only from this dashboard.
const studentPage = { config: { dashboard: 'operator' as const, studentData: true as const } }

export const auditPages: PagePlugin = async (app, { context }) => {
  const db = context.storage.db

  app.get('/audit', studentPage, async (request, reply) => {
    const rows = await listAudit(db, 500)
    const body =
      rows.length === 0
        ? html`<p class="empty">No operator action yet.</p>`
        : html`<p>Every operator action, newest first.</p>${scrollTable({
            headings: ['When (UTC)', 'Who', 'What', 'Target', 'Details'],
            rows: rows.map((row) =>
              tableRow([
                row.at.replace('T', ' ').slice(0, 19),
                row.actor,
                row.action,
                html`<code>${row.target}</code>`,
                html`<code>${row.detail}</code>`,
              ]),
            ),
          })}`
    return sendPage(request, reply, 'Audit log', body, 200, '/dashboard/operator/audit')
  })
}
