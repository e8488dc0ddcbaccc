/** Asks before rotating the tool's key: platforms fetch the new one, and the old one is retired. */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { RETIRED_KEY_DAYS } from '../../../../cases/lti-tool-key.js'
import { html } from '../../../html.js'
import { csrfField } from '../../../layout.js'
import { sendPage } from '../../../send-page.js'
import { LTI_PATH } from './views.js'

export function rotateConfirmPage(request: FastifyRequest, reply: FastifyReply, currentKid: string) {
  const body = html`<p>You are about to rotate the tool key (in use: <code>${currentKid}</code>).</p>
<ul>
  <li>A new RS256 key is made and published at the key set URL; every instance of the service signs with it within
  a minute.</li>
  <li>The key in use now stays published for ${RETIRED_KEY_DAYS} days, so what it signed just before still verifies
  at platforms that fetch the key set then.</li>
  <li>Platforms registered with the key set URL need nothing; one given the public key itself (pasted) needs the new
  one.</li>
</ul>
<form method="post" action="${LTI_PATH}/key/rotate" class="row">
  ${csrfField(request)}
  <button type="submit" class="danger">Rotate the tool key</button>
  <a href="${LTI_PATH}#tool-key">Cancel, keep the key</a>
</form>`
  return sendPage(request, reply, 'Rotate the tool key?', body, 200, LTI_PATH)
}
