/**
 * The partner's request log: the last 7 days of API requests made with their organisation's keys
 * and their sandbox's, filtered, and any one of them found by its request id. Every member may
 * read it, as the usage page.
 */
import { findRequest, readRequestLog } from '../../../../cases/request-log.js'
import type { PagePlugin } from '../../../dashboard-context.js'
import { html } from '../../../html.js'
import { partner } from '../../../page-roles.js'
import { requestLogQuery } from '../../../request-log-query.js'
import { sendPage } from '../../../send-page.js'
import { requestLogBody } from '../../../views/request-log.js'
import { ownKeys, partnerView } from '../partner-view.js'

const PATH = '/dashboard/partner/request-log'

export const requestLogPages: PagePlugin = async (app, { context }) => {
  const db = context.storage.db

  app.get('/request-log', partner, async (request, reply) => {
    const routes = context.apiRoutes?.() ?? []
    const parsed = requestLogQuery(request.query as Record<string, unknown>, routes)
    const v = await partnerView(context, request)
    const keys = await ownKeys(context, v)
    const reader = {
      partner: true as const,
      organisations: [v.sandboxId, ...(v.organisation === undefined ? [] : [v.organisation.id])],
    }
    // This instance's latest entries first, so a request answered a moment ago is found.
    await context.flushRequestLog?.()
    const [page, found] = await Promise.all([
      readRequestLog(db, reader, parsed.query),
      parsed.requestId === undefined ? undefined : findRequest(db, reader, parsed.requestId).then((e) => e ?? null),
    ])
    const intro = html`<p>Every API request made with your organisation's keys and your sandbox's in the last
7 days: when, with which key, the method and route, the status and problem code, how long it took, from which
address, and its request id. Bodies, query values and the path as sent (it holds student ids) are never kept:
the route shows <code>:id</code> in their place.</p>`
    const body = requestLogBody({
      path: PATH,
      intro,
      parsed,
      page,
      found,
      keys: [...keys.live, ...keys.test].map((key) => ({
        id: key.id,
        label: `${key.display_prefix}\u2026 ${key.name} (${key.mode})`,
      })),
      routes,
    })
    return sendPage(request, reply, 'Request log', body, 200, PATH)
  })
}
