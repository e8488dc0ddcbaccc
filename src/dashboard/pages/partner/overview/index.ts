/** The partner's overview at /dashboard/partner: live access, the sandbox, and the keys of both. */
import type { PagePlugin } from '../../../dashboard-context.js'
import { partnerView } from '../partner-view.js'
import { sendOverview } from './overview-page.js'
import { partner } from '../../../page-roles.js'

export const overviewPages: PagePlugin = async (app, { context }) => {
  // '' and not '/': the overview answers at /dashboard/partner only, not with a trailing slash.
  app.get('', partner, async (request, reply) =>
    sendOverview(request, reply, context, await partnerView(context, request)),
  )
}
