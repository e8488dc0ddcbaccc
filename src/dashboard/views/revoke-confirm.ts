/**
 * Revoking a key breaks whatever uses it, within seconds and for good, so the dashboard asks
 * first: this page names the key and what stops working, and its form does the revoking (the
 * same address takes the POST). It works without JavaScript, unlike a confirm() dialog.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ApiKeyRow } from '../../storage/tables.js'
import { html } from '../html.js'
import { csrfField } from '../layout.js'
import { sendPage } from '../send-page.js'
import { utcMinute } from '../times.js'
import { keyRowState } from '../../domain/api-key.js'

export function revokeConfirmPage(
  request: FastifyRequest,
  reply: FastifyReply,
  row: ApiKeyRow,
  now: number,
  where: { action: string; back: string; organisation?: string },
): FastifyReply {
  const state = keyRowState(row, now)
  const of = where.organisation === undefined ? '' : html`, of ${where.organisation}`
  const label = html`<strong>${row.name}</strong> (<code>${row.display_prefix}\u2026</code>, ${row.mode}${of})`
  if (state !== 'active') {
    return sendPage(
      request,
      reply,
      'Key not in force',
      html`<p>The key ${label} is ${state} already: nothing to revoke.</p><p><a href="${where.back}">Back</a></p>`,
    )
  }
  const created = utcMinute(row.created_at)
  const lastUsed = row.last_used_at === null ? 'never' : utcMinute(row.last_used_at)
  const body = html`<p>You are about to revoke the key ${label}, created ${created}, last used ${lastUsed}.</p>
<ul>
  <li>Every integration that uses it gets <strong>401 Unauthorized</strong> within seconds,
  on every instance of the API.</li>
  <li>It cannot be undone. To reach the API again, create a new key and put it where this one was.</li>
</ul>
<form method="post" action="${where.action}" class="row">
  ${csrfField(request)}
  <button type="submit" class="danger">Revoke key ${row.display_prefix}\u2026</button>
  <a href="${where.back}">Cancel, keep the key</a>
</form>`
  return sendPage(request, reply, 'Revoke this key?', body)
}
