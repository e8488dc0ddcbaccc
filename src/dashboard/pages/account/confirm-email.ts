/** The page a change-of-address link opens: a button, so that only a person's click uses the link. */
import type { FastifyRequest } from 'fastify'
import { type Html, html } from '../../html.js'
import { csrfField } from '../../layout.js'

export function confirmEmailForm(request: FastifyRequest, values: { token: string; email: string }): Html {
  return html`<p>Make <strong>${values.email}</strong> the address you sign in with. The old address stops working for
sign-in at once.</p>
<form method="post" action="/dashboard/account/confirm-email" class="stack">
  ${csrfField(request)}
  <input type="hidden" name="token" value="${values.token}">
  <div><button type="submit">Use this address</button></div>
</form>`
}
