/**
 * The page frame: skip link, site navigation for the visitor's role, one <h1>, the notice a
 * redirect asked for (by a fixed code, never by reflected text), and the sign-out form.
 */
import type { FastifyRequest } from 'fastify'
import { type Html, html } from './html.js'

export interface Page {
  title: string
  body: Html
  /** Path of the current page, to mark it in the navigation. */
  current?: string
}

const NOTICES: Record<string, string> = {
  'application-submitted': 'Your application was submitted. Review takes 3-5 business days.',
  'key-revoked': 'The key was revoked. Requests with it are refused within seconds.',
  'key-hidden': 'The key is hidden and will not be shown again; only its hash is kept.',
  'signed-out': 'You are signed out.',
  'signed-out-everywhere': 'Every session of your account has ended, this one too. Sign in again to go on.',
  'reset-requested':
    'If an account has this address, we sent it a link to choose a new password. It works once, for 1 hour; ' +
    'look in the spam folder too.',
  'password-reset': 'Your new password is set, and every session of the account has ended. Sign in with it.',
  'email-verified': 'Your e-mail address is verified.',
  'email-changed': 'The new address is the one you sign in with now, and it is verified.',
  'verification-sent': 'We sent a verification link to your address. It works once, for 24 hours.',
  'verification-limited': 'We sent 3 verification links in the last hour already: use one of them, or try later.',
  'password-changed': 'Your password is changed, and your other sessions have ended.',
  'email-change-sent':
    'We sent a link to the new address, and told the current one. Until the link is used, nothing changes.',
  'email-change-limited': 'We sent 3 change-of-address links in the last hour already: use one, or try later.',
  'session-ended': 'The session has ended; that browser is signed out.',
  'session-gone': 'That session had ended already.',
  invited: 'The invitation is sent. Its link works for 7 days, once, for that address only.',
  'role-changed': 'The role is changed.',
  'member-removed': 'The member is removed, and every session of that account has ended.',
  'invitation-revoked': 'The invitation is revoked: its link no longer works.',
  joined: 'You joined the organisation.',
  left: 'You left the organisation.',
  switched: 'You now work in the organisation you chose.',
  'signed-up':
    'If this address is new, your partner account is ready: sign in with the password you chose to get your sandbox ' +
    'and first test key, and use the link we mailed to verify the address. If it had an account already, sign in ' +
    'with that account’s password (we mailed that address too).',
  'two-step-required':
    'Operator accounts reach children’s data, so they need two-step sign-in: set it up here to reach the other pages.',
  'two-step-required-org':
    'Your organisation requires two-step sign-in of its members: set it up here to reach its pages.',
  'two-step-org-on': 'Every member now needs two-step sign-in; those without it are asked to set it up first.',
  'two-step-org-off': 'Two-step sign-in is no longer required of the members (each may keep theirs).',
  'passkey-added': 'The passkey is added: it signs you in without a password, or stands for the second step.',
  'passkey-removed': 'The passkey is removed: it no longer signs in to this account.',
  'passkey-gone': 'That passkey had been removed already.',
  'two-step-expired': 'Sign in again: the step that asks for the code lasts 10 minutes.',
  'two-step-off': 'Two-step sign-in is off: signing in asks for the password only.',
  'notices-saved': 'Your notices are saved.',
  'operator-invited': 'The invitation is sent. Its link works for 7 days, once, for that address only.',
  'operator-removed': 'The operator is removed, and every session of that account has ended.',
  approved: 'The application was approved and the organisation created.',
  rejected: 'The application was rejected; the partner sees your reason.',
  'agreement-recorded': 'The agreement was recorded; its state is in the table below.',
  'agreement-ended': 'The agreement was ended. Student endpoints are refused within seconds.',
  suspended: 'The organisation is suspended. All its keys are refused within seconds.',
  reinstated: 'The organisation is reinstated. Its keys work again.',
}

function navigation(request: FastifyRequest, current: string | undefined): Html {
  const link = (href: string, label: string) =>
    html`<li><a href="${href}"${current === href ? html` aria-current="page"` : ''}>${label}</a></li>`
  const account = request.account
  const items =
    account === null
      ? [link('/dashboard/login', 'Sign in'), link('/dashboard/signup', 'Sign up')]
      : account.role === 'operator'
        ? [
            link('/dashboard/operator/applications', 'Applications'),
            link('/dashboard/operator/organisations', 'Organisations'),
            link('/dashboard/operator/schools', 'Schools'),
            link('/dashboard/operator/ended-agreements', 'Ended agreements'),
            link('/dashboard/operator/students', 'Students'),
            link('/dashboard/operator/roster', 'Roster import'),
            link('/dashboard/operator/disclosures', 'Disclosure log'),
            link('/dashboard/operator/request-log', 'Request log'),
            link('/dashboard/operator/audit', 'Audit log'),
            link('/dashboard/operator/outbox', 'Outbox'),
            link('/dashboard/operator/lti', 'LTI'),
            ...(account.operator_role === 'admin' ? [link('/dashboard/operator/operators', 'Operators')] : []),
          ]
        : [
            link('/dashboard/partner', 'Overview'),
            link('/dashboard/partner/application', 'Application'),
            link('/dashboard/partner/students', 'Students'),
            link('/dashboard/partner/usage', 'Usage'),
            link('/dashboard/partner/request-log', 'Request log'),
            link('/dashboard/partner/webhooks', 'Webhooks'),
            link('/dashboard/partner/members', 'Members'),
            link('/dashboard/partner/disclosures', 'Disclosure log'),
            link('/dashboard/partner/lti', 'Learning platforms'),
          ]
  const own = account === null ? [] : [link('/dashboard/account', 'Account')]
  return html`<nav aria-label="Dashboard"><ul>${items}${own}<li><a href="/docs">API reference</a></li></ul></nav>`
}

export function layout(request: FastifyRequest, page: Page): string {
  const notice = NOTICES[String((request.query as Record<string, unknown> | undefined)?.notice ?? '')]
  const account = request.account
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title} · Curriculum API dashboard</title>
<link rel="stylesheet" href="/dashboard/assets/dashboard.css">
<script src="/dashboard/assets/dashboard.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="site">
  <p class="brand"><a href="/dashboard">Curriculum API</a> <span>dashboard</span></p>
  ${navigation(request, page.current)}
  ${
    account === null
      ? ''
      : html`<form method="post" action="/dashboard/logout" class="signout">
  <input type="hidden" name="_csrf" value="${request.csrfToken}">
  <span class="who">${account.email} (${account.role})</span>
  <button type="submit" class="link">Sign out</button>
</form>`
  }
</header>
<main id="main" tabindex="-1">
${notice === undefined ? '' : html`<p class="notice" role="status">${notice}</p>`}
<h1>${page.title}</h1>
${page.body}
</main>
</body>
</html>
`.value
}

/** A hidden CSRF field for a form. */
export function csrfField(request: FastifyRequest): Html {
  return html`<input type="hidden" name="_csrf" value="${request.csrfToken}">`
}
