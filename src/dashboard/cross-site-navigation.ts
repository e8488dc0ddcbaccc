/**
 * Pages that show children's data (routes with `studentData: true`) answer only a request that
 * started on this dashboard. The session cookie is SameSite=Lax, so the browser still sends it
 * on a top-level GET from another site: any page could make a signed-in partner's browser open
 * the Students page, and every student listed would be recorded as disclosed (and a search by
 * name run on that site's behalf). Such a request gets a page that shows and records nothing,
 * with a link to the same address; followed from our own page, that link passes.
 *
 * Where the request came from:
 * - `Sec-Fetch-Site` (Fetch Metadata), sent by every current browser: `same-origin`, or `none`
 *   (typed, a bookmark), passes; `same-site` (another port or subdomain), `cross-site` and any
 *   other value do not.
 * - Without it (browsers older than Chrome 76, Firefox 90 or Safari 16.4, and scripts), a
 *   `Referer` of our own origin passes: our pages send it on every link under
 *   `Referrer-Policy: same-origin`, and another site cannot forge it. A request with neither
 *   header gets the continue page, whose link then sends the Referer.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ALLOWED_FETCH_SITES, isOwnOrigin } from './csrf.js'
import { html } from './html.js'
import { sendPage } from './send-page.js'

/** Why the request did not come from this dashboard, or null when it did. */
export function crossSiteSource(request: FastifyRequest): string | null {
  const site = request.headers['sec-fetch-site']
  if (site !== undefined)
    return ALLOWED_FETCH_SITES.has(String(site).toLowerCase()) ? null : `Sec-Fetch-Site: ${String(site)}`
  const referer = request.headers.referer
  if (referer === undefined) return 'neither Sec-Fetch-Site nor Referer'
  return isOwnOrigin(request, referer) ? null : 'Referer of another origin'
}

/** The page a request from elsewhere gets instead: nothing of a child, a link to open the page here. */
export function continuePage(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const body = html`<p>You came here from another site or app. This page shows children's data, and every
view of it is recorded, so it opens only from the dashboard itself: nothing was shown or recorded.</p>
<p><a class="button" href="${request.url}">Continue to the page</a></p>
<p>If you did not mean to open it, go to <a href="/dashboard">the dashboard</a> instead.</p>`
  return sendPage(request, reply, 'Open this page?', body)
}
