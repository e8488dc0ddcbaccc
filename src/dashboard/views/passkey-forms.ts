/**
 * The passkey forms. Passkeys need the browser's WebAuthn API, so each form is driven by the
 * dashboard's script (passkey-script.ts) through `data-passkey`: the sign-in forms stay hidden
 * until the script shows them, and the Account page's form says what a browser without it lacks.
 */
import type { FastifyRequest } from 'fastify'
import type { PasskeyRow } from '../../storage/tables.js'
import { field } from '../forms.js'
import { type Html, html } from '../html.js'
import { csrfField } from '../layout.js'
import { utcMinute } from '../times.js'
import { ACTION_HEADING, scrollTable, tableRow } from './table.js'

export const PASSKEY_SIGN_IN = '/dashboard/login/passkey'
export const PASSKEY_SECOND_STEP = '/dashboard/sign-in/code/passkey'
export const ACCOUNT_PASSKEYS = '/dashboard/account/passkeys'

/** "Sign in with a passkey" (no password), or the second step's "Use a passkey"; shown by the script. */
export function passkeySignInForm(request: FastifyRequest, action: string, label: string, next?: string): Html {
  return html`<form method="post" action="${action}" data-passkey="authenticate" class="stack" hidden>
  ${csrfField(request)}
  ${next ? html`<input type="hidden" name="next" value="${next}">` : ''}
  <div><button type="submit" class="secondary">${label}</button></div>
  <p class="field-error" data-passkey-status role="alert"></p>
</form>`
}

export function passkeysSection(request: FastifyRequest, passkeys: readonly PasskeyRow[]): Html {
  const rows = passkeys.map((p) =>
    tableRow([
      p.name,
      utcMinute(p.created_at),
      p.last_used_at === null ? 'never' : utcMinute(p.last_used_at),
      html`<form method="post" action="${ACCOUNT_PASSKEYS}/${p.id}/remove">${csrfField(request)}
<button type="submit">Remove<span class="visually-hidden"> the passkey ${p.name}</span></button></form>`,
    ]),
  )
  return html`<h2 id="passkeys">Passkeys</h2>
<p>A passkey signs you in without a password, and stands for the second step after one. Add one per device.</p>
${
  rows.length === 0
    ? html`<p class="empty">No passkey yet.</p>`
    : scrollTable({ caption: 'Your passkeys', headings: ['Name', 'Added', 'Last used', ACTION_HEADING], rows })
}
<form method="post" action="${ACCOUNT_PASSKEYS}" data-passkey="register" class="stack" novalidate>
  ${csrfField(request)}
  ${field('passkeyName', 'Name of the new passkey', { hint: 'Which device it is on, e.g. "work laptop".' })}
  <div><button type="submit">Add a passkey</button></div>
  <p class="field-error" data-passkey-status role="alert"></p>
  <noscript><p class="hint">Adding a passkey needs JavaScript: your browser asks the device for it.</p></noscript>
</form>`
}
