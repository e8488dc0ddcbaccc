/** The recovery pages' forms: asking for a reset link, choosing the new password, confirming an address. */
import type { FastifyRequest } from 'fastify'
import type { LinkProblem } from '../../../cases/account-links.js'
import { DashboardError } from '../../dashboard-error.js'
import { errorSummary, type FieldErrors, field } from '../../forms.js'
import { type Html, html } from '../../html.js'
import { csrfField } from '../../layout.js'

export function forgotForm(request: FastifyRequest, email: string, errors: FieldErrors = {}): Html {
  return html`${errorSummary(errors)}
<p>Enter the address you sign in with. If it has an account, we send it a link to choose a new password; the link
works once, for 1 hour.</p>
<form method="post" action="/dashboard/forgot-password" class="stack" novalidate>
  ${csrfField(request)}
  ${field('email', 'E-mail address', { type: 'email', value: email, autocomplete: 'username', required: true, errors })}
  <div><button type="submit">Send me a link</button></div>
</form>
<p><a href="/dashboard/login">Back to sign in</a></p>`
}

export function resetForm(
  request: FastifyRequest,
  values: { token: string; email: string },
  errors: FieldErrors = {},
): Html {
  return html`${errorSummary(errors)}
<p>Choose a new password for <strong>${values.email}</strong>. Every session of the account ends, on every device.</p>
<form method="post" action="/dashboard/reset-password" class="stack" novalidate>
  ${csrfField(request)}
  <input type="hidden" name="token" value="${values.token}">
  <input type="hidden" name="username" value="${values.email}" autocomplete="username">
  ${field('password', 'New password', {
    type: 'password',
    autocomplete: 'new-password',
    required: true,
    errors,
    hint: 'At least 12 characters, and not a common password.',
  })}
  <div><button type="submit">Set the new password</button></div>
</form>`
}

export function verifyForm(request: FastifyRequest, values: { token: string; email: string }): Html {
  return html`<p>Confirm that <strong>${values.email}</strong> is your address. Applying for live access needs a
verified address.</p>
<form method="post" action="/dashboard/verify-email" class="stack">
  ${csrfField(request)}
  <input type="hidden" name="token" value="${values.token}">
  <div><button type="submit">Confirm my address</button></div>
</form>`
}

/** The page for a link that does not work, saying why and, in `whatNext`, how to get one that does. */
export function linkProblem(problem: LinkProblem, whatNext: string): never {
  if (problem === 'unknown')
    throw new DashboardError(
      404,
      'This link does not work',
      `It is not a link we sent, or it was cut short: copy the whole address from the message. ${whatNext}`,
    )
  if (problem === 'used')
    throw new DashboardError(
      410,
      'This link was used already',
      `Each link works once, and a later change to the account retires older links. ${whatNext}`,
    )
  throw new DashboardError(410, 'This link has expired', `Its time ran out. ${whatNext}`)
}
