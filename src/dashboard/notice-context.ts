/** What the dashboard's cases need to queue notices (cases/notices.ts): PUBLIC_URL and the held-mail log. */
import type { NoticeContext } from '../cases/notices.js'
import type { DashboardDeps } from './dashboard-context.js'

export function noticeContext(context: Pick<DashboardDeps, 'mail'>): NoticeContext {
  return { publicUrl: context.mail.publicUrl, ...(context.mail.held ? { held: context.mail.held } : {}) }
}
