/**
 * Two-step sign-in on the Account page: its section there, the enrolment page (the QR code, the
 * secret written out, a code to confirm), and the recovery codes, shown in a POST's answer only.
 */
import type { FastifyRequest } from 'fastify'
import type { SecondFactorStatus, TotpEnrolment } from '../../../cases/second-factor.js'
import { qrSvg } from '../../../domain/qr-svg.js'
import { errorSummary, field, type FieldErrors } from '../../forms.js'
import { type Html, html, trusted } from '../../html.js'
import { csrfField } from '../../layout.js'
import { utcMinute } from '../../times.js'
import { ENROL_PATH } from '../../two-step-gate.js'

const codeHint = 'The 6 digits your authenticator app shows now, or one of your recovery codes.'

/** A form asking for a current code before a change to the factor itself. */
function codeForm(request: FastifyRequest, action: string, name: string, button: string, errors: FieldErrors): Html {
  return html`<form method="post" action="${ENROL_PATH}/${action}" class="stack" novalidate>
  ${csrfField(request)}
  ${field(name, 'Current code', { autocomplete: 'one-time-code', required: true, errors, hint: codeHint })}
  <div><button type="submit">${button}</button></div>
</form>`
}

/** The Account page's section. */
export function twoStepSection(request: FastifyRequest, status: SecondFactorStatus, errors: FieldErrors): Html {
  const heading = html`<h2 id="two-step">Two-step sign-in</h2>`
  if (status.totp !== 'confirmed')
    return html`${heading}
<p>Off. With it on, signing in asks for a code from an authenticator app on your phone as well as the password.
${request.account?.role === 'operator' ? 'Operator accounts need it to reach any operator page.' : ''}</p>
<p><a href="${ENROL_PATH}">${status.totp === 'pending' ? 'Finish setting up' : 'Set up'} two-step sign-in</a></p>`
  const left = status.recoveryCodesLeft
  return html`${heading}
<p><span class="state active">on</span> since ${utcMinute(status.confirmedAt!)}, with an authenticator app.
${left === 1 ? '1 unused recovery code' : `${left} unused recovery codes`} left.</p>
<h3>Regenerate recovery codes</h3>
<p>Ten new codes replace all the old ones, used or not.</p>
${codeForm(request, 'recovery-codes', 'regenerateCode', 'Regenerate recovery codes', errors)}
<h3>Turn off two-step sign-in</h3>
<p>The authenticator and the recovery codes are removed; signing in asks for the password only.</p>
${codeForm(request, 'remove', 'removeCode', 'Turn off two-step sign-in', errors)}`
}

/** The secret as typed by hand: groups of four. */
export function grouped(secret: string): string {
  return secret.match(/.{1,4}/g)!.join(' ')
}

/** The enrolment page: the start button, or the pending authenticator's QR code, secret and code field. */
export function enrolBody(
  request: FastifyRequest,
  enrolment: TotpEnrolment | undefined,
  errors: FieldErrors = {},
): Html {
  const intro = html`<p>Two-step sign-in asks for a code from an authenticator app (such as Google Authenticator,
Microsoft Authenticator, 1Password or FreeOTP) each time you sign in, so a password alone is not enough.</p>`
  if (enrolment === undefined)
    return html`${intro}
<form method="post" action="${ENROL_PATH}/begin" class="stack">${csrfField(request)}
  <div><button type="submit">Set up two-step sign-in</button></div>
</form>`
  const label = 'QR code that adds this account to an authenticator app; the same key is written out below'
  return html`${errorSummary(errors)}
${intro}
<h2>1. Add the account to your app</h2>
<p>Scan this QR code with the app:</p>
<div class="qr">${trusted(qrSvg(enrolment.uri, { label }))}</div>
<p>Or enter this key by hand (a time-based key, for the account ${request.account?.email ?? ''}):</p>
<p><code class="secret" id="totp-secret">${grouped(enrolment.secret)}</code></p>
<h2>2. Enter the code it shows</h2>
<p>Two-step sign-in takes effect only when the code is right.</p>
<form method="post" action="${ENROL_PATH}/confirm" class="stack" novalidate>
  ${csrfField(request)}
  ${field('code', 'Code from the app', { autocomplete: 'one-time-code', required: true, errors, hint: '6 digits.' })}
  <div><button type="submit">Turn on two-step sign-in</button></div>
</form>
<form method="post" action="${ENROL_PATH}/begin" class="stack">${csrfField(request)}
  <div><button type="submit" class="link">Start again with a new key</button></div>
</form>`
}

/** The recovery codes, once: in the answer to the form that made them, never on a page of their own. */
export function recoveryCodesBody(codes: readonly string[], continueTo: string, first: boolean): Html {
  return html`<p role="status">${
    first ? 'Two-step sign-in is on.' : 'New recovery codes are made; the old ones no longer work.'
  }</p>
<p><strong>Store these ten recovery codes now</strong>, somewhere other than your phone: a password manager, or
printed on paper. Each works once in place of a code from the app, if you lose your phone. This is the only time
they are shown.</p>
<ol class="recovery-codes">${codes.map((code) => html`<li><code>${code}</code></li>`)}</ol>
<p><a href="${continueTo}">I have stored them: continue</a></p>`
}
