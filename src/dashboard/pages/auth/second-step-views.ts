/** The sign-in's second step: the code form, and what a used recovery code leaves. */
import type { FastifyRequest } from 'fastify'
import { PASSKEY_SECOND_STEP, passkeySignInForm } from '../../views/passkey-forms.js'
import { errorSummary, field, type FieldErrors } from '../../forms.js'
import { type Html, html } from '../../html.js'
import { csrfField } from '../../layout.js'
import { CODE_PATH } from '../../two-step-gate.js'

export function codeForm(
  request: FastifyRequest,
  values: { next?: string | undefined; passkeys?: boolean },
  errors: FieldErrors = {},
): Html {
  return html`${errorSummary(errors)}
<p>Your password was right. This account has two-step sign-in: enter the code your authenticator app shows for
Curriculum API (${request.awaitingCode?.email ?? ''}). The step lasts 10 minutes.</p>
<form method="post" action="${CODE_PATH}" class="stack" novalidate>
  ${csrfField(request)}
  ${values.next ? html`<input type="hidden" name="next" value="${values.next}">` : ''}
  ${field('code', 'Code', {
    autocomplete: 'one-time-code',
    required: true,
    errors,
    hint: 'The 6 digits from your app. Without your phone, enter one of your recovery codes (like 7k2mq-x9d4h).',
  })}
  <div><button type="submit">Continue</button></div>
</form>
${values.passkeys ? passkeySignInForm(request, PASSKEY_SECOND_STEP, 'Use a passkey instead', values.next) : ''}
<form method="post" action="/dashboard/logout" class="stack">
  ${csrfField(request)}
  <div><button type="submit" class="link">Cancel and sign out</button></div>
</form>`
}

export function recoveryCodeUsed(codesLeft: number, continueTo: string): Html {
  const left = codesLeft === 1 ? '1 recovery code' : `${codesLeft} recovery codes`
  return html`<p role="status">You signed in with a recovery code. It is used now and will not work again.
You have <strong>${left}</strong> left.</p>
${
  codesLeft <= 3
    ? html`<p>Make new ones soon on your Account page: <a href="/dashboard/account#two-step">Two-step sign-in</a>.</p>`
    : ''
}
<p><a href="${continueTo}">Continue</a></p>`
}
