/**
 * The Account page's Notices section: which optional notices the account gets (all by default),
 * and the security notices, which are always sent and so have no box to untick.
 */
import type { FastifyRequest } from 'fastify'
import { NOTICE_TOPICS, type NoticeTopic } from '../../../cases/notices.js'
import { type Html, html } from '../../html.js'
import { csrfField } from '../../layout.js'

export const NOTICES_PATH = '/dashboard/account/notices'

const SECURITY = html`<p>Security notices are always sent to your address: a sign-in from a browser this account has
not used before, and an authenticator app or a passkey added or removed.</p>`

export function noticesSection(request: FastifyRequest, chosen: Record<NoticeTopic, boolean> | undefined): Html {
  const heading = html`<h2 id="notices">Notices</h2>`
  if (chosen === undefined) return html`${heading}${SECURITY}`
  const boxes = (Object.keys(NOTICE_TOPICS) as NoticeTopic[]).map((topic) => {
    const { label, roles } = NOTICE_TOPICS[topic]
    const who = roles.length === 1 ? 'owners' : 'owners and developers'
    return html`<div><label><input type="checkbox" name="topics" value="${topic}"${chosen[topic] ? html` checked` : ''}>
  ${label} <span class="hint">(to ${who})</span></label></div>`
  })
  return html`${heading}
<p>Mail about your organisations, sent to the members whose role it concerns. Untick what you do not want.</p>
<form method="post" action="${NOTICES_PATH}" class="stack">${csrfField(request)}
  <fieldset><legend>Send me</legend>${boxes}</fieldset>
  <div><button type="submit">Save notices</button></div>
</form>
${SECURITY}`
}
