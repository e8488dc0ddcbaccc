/**
 * The operator's request log: every organisation's API requests of the last 7 days, filtered (by
 * organisation too), and any one of them found by its request id.
 */
import { findRequest, readRequestLog } from '../../../../cases/request-log.js'
import { listOrganisationsByName } from '../../../../storage/access-repository.js'
import type { PagePlugin } from '../../../dashboard-context.js'
import { html } from '../../../html.js'
import { operator } from '../../../page-roles.js'
import { requestLogQuery } from '../../../request-log-query.js'
import { sendPage } from '../../../send-page.js'
import { requestLogBody } from '../../../views/request-log.js'

const PATH = '/dashboard/operator/request-log'

export const requestLogPages: PagePlugin = async (app, { context }) => {
  const db = context.storage.db

  app.get('/request-log', operator, async (request, reply) => {
    const routes = context.apiRoutes?.() ?? []
    const parsed = requestLogQuery(request.query as Record<string, unknown>, routes)
    const reader = { partner: false as const }
    await context.flushRequestLog?.()
    const [page, found, organisations] = await Promise.all([
      readRequestLog(db, reader, parsed.query),
      parsed.requestId === undefined
        ? undefined
        : findRequest(db, reader, parsed.requestId, parsed.query.organisationId).then((e) => e ?? null),
      listOrganisationsByName(db),
    ])
    const intro = html`<p>Every organisation's API requests of the last 7 days, as each partner sees its own on
its Request log page. Requests without a valid key belong to no organisation and are not here (see the access
log and the <code>http_refusals_total</code> metric).</p>`
    const body = requestLogBody({
      path: PATH,
      intro,
      parsed,
      page,
      found,
      routes,
      organisations: organisations.map((o) => ({ id: o.id, name: o.name })),
    })
    return sendPage(request, reply, 'Request log', body, 200, PATH)
  })
}
