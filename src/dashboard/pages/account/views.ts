/**
 * The Account page: the sign-in address and whether it is verified, the password and address
 * forms (each asks for the current password), and the account's sessions with their last use.
 */
import type { FastifyRequest } from 'fastify'
import { browserFamily } from '../../../domain/user-agent.js'
import type { AccountOrganisation } from '../../../storage/membership-repository.js'
import type { SecondFactorStatus } from '../../../cases/second-factor.js'
import type { AccountRow, PasskeyRow, SessionRow } from '../../../storage/tables.js'
import { errorSummary, type FieldErrors, field } from '../../forms.js'
import { type Html, html } from '../../html.js'
import { csrfField } from '../../layout.js'
import { utcMinute } from '../../times.js'
import { ACTION_HEADING, scrollTable, tableRow } from '../../views/table.js'
import { twoStepSection } from './two-step-views.js'
import { noticesSection } from './notices-views.js'
import type { NoticeTopic } from '../../../cases/notices.js'
import { passkeysSection } from '../../views/passkey-forms.js'

export const ACCOUNT_PATH = '/dashboard/account'

export interface AccountView {
  account: AccountRow
  sessions: readonly SessionRow[]
  currentSessionId: string | null
  /** A partner's organisations, to switch between. */
  organisations: readonly AccountOrganisation[]
  secondFactor: SecondFactorStatus
  /** A partner's optional notices, on or off; undefined for an operator, who gets security notices only. */
  notices?: Record<NoticeTopic, boolean>
  passkeys: readonly PasskeyRow[]
  /** The form that was refused, with what was typed (never a password or a code) and what is wrong. */
  refused?: { form: 'password' | 'email' | 'two-step'; errors: FieldErrors; email?: string }
}

const currentPassword = (name: string, errors: FieldErrors) =>
  field(name, 'Current password', { type: 'password', autocomplete: 'current-password', required: true, errors })

function addressSection(request: FastifyRequest, account: AccountRow): Html {
  const verified = account.email_verified_at
  if (verified !== null)
    return html`<p>You sign in as <strong>${account.email}</strong>, verified ${utcMinute(verified)}.</p>`
  return html`<p>You sign in as <strong>${account.email}</strong>. <span class="state pending">not verified</span></p>
<p>Applying for live access needs a verified address. Use the link we sent, or send a new one (it works for 24 hours;
at most 3 an hour).</p>
<form method="post" action="${ACCOUNT_PATH}/verify" class="stack">${csrfField(request)}
  <div><button type="submit">Send a verification link</button></div>
</form>`
}

function passwordForm(request: FastifyRequest, errors: FieldErrors): Html {
  return html`<h2 id="password">Change your password</h2>
<form method="post" action="${ACCOUNT_PATH}/password" class="stack" novalidate>
  ${csrfField(request)}
  <input type="hidden" name="username" value="${request.account?.email ?? ''}" autocomplete="username">
  ${currentPassword('currentPassword', errors)}
  ${field('newPassword', 'New password', {
    type: 'password',
    autocomplete: 'new-password',
    required: true,
    errors,
    hint: 'At least 12 characters, and not a common password. Your other sessions end when it changes.',
  })}
  <div><button type="submit">Change password</button></div>
</form>`
}

function emailForm(request: FastifyRequest, value: string, errors: FieldErrors): Html {
  return html`<h2 id="email-change">Change your e-mail address</h2>
<form method="post" action="${ACCOUNT_PATH}/email" class="stack" novalidate>
  ${csrfField(request)}
  ${field('newEmail', 'New e-mail address', {
    type: 'email',
    value,
    autocomplete: 'email',
    required: true,
    errors,
    hint: 'We send a link to the new address (it works for 24 hours) and tell the current one.',
  })}
  ${currentPassword('emailPassword', errors)}
  <div><button type="submit">Send the link</button></div>
</form>`
}

function organisationsSection(request: FastifyRequest, view: AccountView): Html {
  if (view.organisations.length === 0) return html``
  const rows = view.organisations.map((o) =>
    tableRow([
      o.name,
      o.role,
      o.organisationId === view.account.organisation_id
        ? html`Current`
        : html`<form method="post" action="${ACCOUNT_PATH}/organisation">${csrfField(request)}
<input type="hidden" name="organisationId" value="${o.organisationId}">
<button type="submit">Switch<span class="visually-hidden"> to ${o.name}</span></button></form>`,
    ]),
  )
  return html`<h2 id="organisations">Your organisations</h2>
<p>The partner pages show one organisation at a time.</p>
${scrollTable({ caption: 'Your organisations', headings: ['Organisation', 'Your role', ACTION_HEADING], rows })}`
}

function sessionsSection(request: FastifyRequest, view: AccountView): Html {
  const rows = view.sessions.map((session) => {
    const current = session.id === view.currentSessionId
    const from = session.last_address ?? 'an unknown address'
    const action = current
      ? html`This session`
      : html`<form method="post" action="${ACCOUNT_PATH}/sessions/${session.id ?? ''}/end">${csrfField(request)}
<button type="submit">End<span class="visually-hidden"> the session from ${from}</span></button></form>`
    return tableRow([
      browserFamily(session.user_agent),
      session.last_address ?? '',
      session.last_used_at === null ? '' : utcMinute(session.last_used_at),
      utcMinute(session.created_at),
      action,
    ])
  })
  return html`<h2 id="sessions">Sessions</h2>
<p>Where the account is signed in. Last use is kept to the minute.</p>
${scrollTable({
  caption: 'Sessions, most recently used first',
  headings: ['Browser', 'Address', 'Last used', 'Signed in', ACTION_HEADING],
  rows,
})}
<form method="post" action="${ACCOUNT_PATH}/sign-out-everywhere" class="stack">${csrfField(request)}
  <div><button type="submit">Sign out everywhere</button></div>
</form>`
}

export function accountBody(request: FastifyRequest, view: AccountView): Html {
  const refused = view.refused
  const errors = refused?.errors ?? {}
  return html`${errorSummary(errors)}
${addressSection(request, view.account)}
${organisationsSection(request, view)}
${passwordForm(request, refused?.form === 'password' ? errors : {})}
${emailForm(request, refused?.email ?? '', refused?.form === 'email' ? errors : {})}
${twoStepSection(request, view.secondFactor, refused?.form === 'two-step' ? errors : {})}
${passkeysSection(request, view.passkeys)}
${noticesSection(request, view.notices)}
${sessionsSection(request, view)}`
}
