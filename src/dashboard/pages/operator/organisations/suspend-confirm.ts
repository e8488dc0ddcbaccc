/**
 * Suspending an organisation stops every integration of a partner within seconds, so the
 * dashboard asks first, as it does before revoking a key (revoke-confirm.ts): this page names
 * the organisation and what stops, and its form suspends (the same address takes the POST).
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { keyRowState } from '../../../../domain/api-key.js'
import type { ApiKeyRow, OrganisationRow } from '../../../../storage/tables.js'
import { html } from '../../../html.js'
import { csrfField } from '../../../layout.js'
import { sendPage } from '../../../send-page.js'

export function suspendConfirmPage(
  request: FastifyRequest,
  reply: FastifyReply,
  organisation: OrganisationRow,
  keys: readonly ApiKeyRow[],
  now: number,
): FastifyReply {
  const base = `/dashboard/operator/organisations/${organisation.id}`
  const name = html`<strong>${organisation.name}</strong>`
  if (organisation.status !== 'active') {
    return sendPage(
      request,
      reply,
      'Organisation suspended already',
      html`<p>${name} is suspended already: nothing to do.</p><p><a href="${base}">Back</a></p>`,
    )
  }
  const inForce = keys.filter((key) => keyRowState(key, now) === 'active').length
  const keyCount = `${inForce} key${inForce === 1 ? '' : 's'} in force`
  const body = html`<p>You are about to suspend ${name} (${keyCount}).</p>
<ul>
  <li>Every request with any of its keys gets <strong>403 organisation_suspended</strong> within seconds,
  on every instance of the API, and its partners cannot create live keys.</li>
  <li>Nothing is deleted: reinstating the organisation makes its keys work again.</li>
</ul>
<form method="post" action="${base}/suspend" class="row">
  ${csrfField(request)}
  <button type="submit" class="danger">Suspend ${organisation.name}</button>
  <a href="${base}">Cancel, keep it active</a>
</form>`
  return sendPage(request, reply, `Suspend ${organisation.name}?`, body, 200, '/dashboard/operator/organisations')
}
