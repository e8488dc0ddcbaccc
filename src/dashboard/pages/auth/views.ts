/** The sign-up and sign-in forms, sent back with what was typed and what is wrong with it. */
import type { FastifyRequest } from 'fastify'
import { errorSummary, field, type FieldErrors } from '../../forms.js'
import { type Html, html } from '../../html.js'
import { csrfField } from '../../layout.js'
import { PASSKEY_SIGN_IN, passkeySignInForm } from '../../views/passkey-forms.js'

/** The e-mail address field of the sign-up and sign-in forms. */
function emailField(label: string, value: string | undefined, autocomplete: string, errors: FieldErrors): Html {
  return field('email', label, { type: 'email', value: value ?? '', autocomplete, required: true, errors })
}

export function signUpForm(request: FastifyRequest, values: { email?: string }, errors: FieldErrors = {}): Html {
  return html`${errorSummary(errors)}
<p>Create a partner account. You get a sandbox as soon as you sign in: test keys that work on the real catalog
and on made-up students, before any review.</p>
<form method="post" action="/dashboard/signup" class="stack" novalidate>
  ${csrfField(request)}
  ${emailField('Work e-mail address', values.email, 'email', errors)}
  ${field('password', 'Password', {
    type: 'password',
    autocomplete: 'new-password',
    required: true,
    errors,
    hint:
      'At least 12 characters, and not a common password. ' +
      'A few words together are easy to remember and hard to guess.',
  })}
  <div><button type="submit">Create account</button></div>
</form>
<p>Already have an account? <a href="/dashboard/login">Sign in</a>.</p>`
}

export function signInForm(
  request: FastifyRequest,
  values: { email?: string; next?: string },
  errors: FieldErrors = {},
): Html {
  return html`${errorSummary(errors)}
<form method="post" action="/dashboard/login" class="stack" novalidate>
  ${csrfField(request)}
  ${values.next ? html`<input type="hidden" name="next" value="${values.next}">` : ''}
  ${emailField('E-mail address', values.email, 'username', errors)}
  ${field('password', 'Password', { type: 'password', autocomplete: 'current-password', required: true, errors })}
  <div><button type="submit">Sign in</button></div>
</form>
${passkeySignInForm(request, PASSKEY_SIGN_IN, 'Sign in with a passkey', values.next)}
<p><a href="/dashboard/forgot-password">Forgot your password?</a></p>
<p>New partner? <a href="/dashboard/signup">Create an account</a>.</p>`
}
