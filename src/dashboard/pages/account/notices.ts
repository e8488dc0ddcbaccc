/** The Account page's Notices form: a partner account chooses its optional notices (cases/notices.ts). */
import { setNoticePreferences } from '../../../cases/notices.js'
import type { PagePlugin } from '../../dashboard-context.js'
import { DashboardError } from '../../dashboard-error.js'
import { type FormBody, list } from '../../forms.js'
import { ACCOUNT_PATH } from './views.js'
import { NOTICES_PATH } from './notices-views.js'

const signedIn = { config: { dashboard: 'signed-in' as const, twoStep: 'setup' as const } }

export const noticePages: PagePlugin = async (app, { context }) => {
  app.post(NOTICES_PATH.replace('/dashboard', ''), signedIn, async (request, reply) => {
    // Operators are members of no organisation: only security notices reach them, and those stay on.
    if (request.account!.role !== 'partner')
      throw new DashboardError(403, 'Not for operators', 'Operator accounts get the security notices only.')
    const on = list(request.body as FormBody, 'topics')
    await setNoticePreferences(context.storage.db, request.account!.id, on, context.clock.now())
    return reply.redirect(`${ACCOUNT_PATH}?notice=notices-saved#notices`, 303)
  })
}
