/**
 * The notices, as messages (docs/accounts.md "Notices"): each names the service, the organisation
 * and what the notice is about (an application, an agreement's document reference, a key's name
 * and prefix, an endpoint's address), with the dashboard page to act on. Never a student: nothing
 * here takes one.
 */
import { compose } from './account-mail.js'
import type { OutgoingMail } from './mail.js'

/** `2026-03-09 09:00 UTC`: a moment as a person reads it. */
export const readable = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`

const CHANGE_PREFERENCES = 'You can choose which notices you get on your Account page.'

export function applicationApprovedMail(
  to: string,
  application: { organisation: string; scopes: readonly string[] },
  publicUrl: string,
): OutgoingMail {
  const scopes = application.scopes.length === 0 ? 'the catalog only' : application.scopes.join(', ')
  return compose({
    kind: 'application-approved',
    to,
    subject: `Live access approved for ${application.organisation}`,
    before: [
      `Your application for live access to the Curriculum API for ${application.organisation} was approved. ` +
        `Granted scopes: ${scopes}.`,
      'Next steps: the operator records your organisation\u2019s data-sharing agreement; then create a live key ' +
        'on the Keys page, and invite your team on the Members page (you are the organisation\u2019s owner).',
    ],
    link: { href: `${publicUrl}/dashboard/partner`, label: 'Open your dashboard' },
    after: [],
  })
}

export function applicationRejectedMail(
  to: string,
  application: { organisation: string; reason: string },
  publicUrl: string,
): OutgoingMail {
  return compose({
    kind: 'application-rejected',
    to,
    subject: `Your application for ${application.organisation} was not approved`,
    before: [
      `Your application for live access to the Curriculum API for ${application.organisation} was not approved.`,
      `The operator's reason: ${application.reason}`,
      'Your sandbox keeps working. You may apply again once the reason is addressed.',
    ],
    link: { href: `${publicUrl}/dashboard/partner/application`, label: 'Your application' },
    after: [],
  })
}

export interface AgreementNotice {
  organisation: string
  document: string
  signedAt: string
  expiresAt: string | null
}

export function agreementRecordedMail(to: string, agreement: AgreementNotice, publicUrl: string): OutgoingMail {
  const until = agreement.expiresAt === null ? 'with no expiry date' : `until ${readable(agreement.expiresAt)}`
  return compose({
    kind: 'agreement-recorded',
    to,
    subject: `Data-sharing agreement recorded for ${agreement.organisation}`,
    before: [
      `The operator recorded the data-sharing agreement "${agreement.document}" of ${agreement.organisation}, ` +
        `signed ${readable(agreement.signedAt)}, in force ${until}.`,
    ],
    link: { href: `${publicUrl}/dashboard/partner`, label: 'Open your dashboard' },
    after: [CHANGE_PREFERENCES],
  })
}

export function agreementEndingMail(
  to: string,
  agreement: AgreementNotice & { expiresAt: string },
  publicUrl: string,
): OutgoingMail {
  return compose({
    kind: 'agreement-ending',
    to,
    subject: `The data-sharing agreement of ${agreement.organisation} ends on ${agreement.expiresAt.slice(0, 10)}`,
    before: [
      `The data-sharing agreement "${agreement.document}" of ${agreement.organisation} ends at ` +
        `${readable(agreement.expiresAt)}, and no other agreement follows it yet.`,
      'After it ends, live keys no longer reach student data, and the data received under it must be deleted ' +
        'within its disposition period. To go on, ask the operator to record a new agreement before then.',
    ],
    link: { href: `${publicUrl}/dashboard/partner`, label: 'Open your dashboard' },
    after: [CHANGE_PREFERENCES],
  })
}

export function keyExpiringMail(
  to: string,
  key: { organisation: string; name: string; prefix: string; expiresAt: string },
  publicUrl: string,
): OutgoingMail {
  return compose({
    kind: 'key-expiring',
    to,
    subject: `A live key of ${key.organisation} expires on ${key.expiresAt.slice(0, 10)}`,
    before: [
      `The live key "${key.name}" (${key.prefix}...) of ${key.organisation} expires at ${readable(key.expiresAt)}. ` +
        'Requests with it are refused from then on.',
      'Create a new key, put it in place, then revoke the old one.',
    ],
    link: { href: `${publicUrl}/dashboard/partner`, label: 'Your keys (overview)' },
    after: [CHANGE_PREFERENCES],
  })
}

export function webhookDisabledMail(
  to: string,
  endpoint: { organisation: string; url: string; reason: string },
  publicUrl: string,
): OutgoingMail {
  return compose({
    kind: 'webhook-disabled',
    to,
    subject: `A webhook endpoint of ${endpoint.organisation} was disabled`,
    before: [
      `The webhook endpoint ${endpoint.url} of ${endpoint.organisation} was disabled. ${endpoint.reason}`,
      'Events are not delivered to it while it is disabled.',
    ],
    link: { href: `${publicUrl}/dashboard/partner/webhooks`, label: 'Your webhooks' },
    after: [CHANGE_PREFERENCES],
  })
}

/** The owners of an organisation whose keys call the API, told that an operation will go. */
export function deprecationMail(
  to: string,
  notice: { organisation: string; operation: string; deprecatedAt: string; sunsetAt: string },
  publicUrl: string,
): OutgoingMail {
  return compose({
    kind: 'api-deprecation',
    to,
    subject: `Curriculum API: ${notice.operation} may be removed after ${notice.sunsetAt.slice(0, 10)}`,
    before: [
      `The operation ${notice.operation} of the Curriculum API is deprecated from ${notice.deprecatedAt} and ` +
        `may be removed after ${notice.sunsetAt}. The keys of ${notice.organisation} called the API in the last ` +
        '30 days, so your code may call it.',
      'Until then every answer of the operation carries the headers Deprecation and Sunset: look for them in your ' +
        'logs to find the code that still calls it. The changelog says what to use instead.',
    ],
    link: { href: `${publicUrl}/docs/changelog`, label: 'The changelog' },
    after: ['This notice goes to the owners of every organisation whose keys call the API; it cannot be turned off.'],
  })
}

export type DeadlineThreshold = '14d' | '3d' | 'passed'

export function deletionDeadlineMail(
  to: string,
  end: { organisation: string; document: string; deletionDueAt: string; threshold: DeadlineThreshold },
  publicUrl: string,
): OutgoingMail {
  const due = readable(end.deletionDueAt)
  const passed = end.threshold === 'passed'
  return compose({
    kind: 'deletion-deadline',
    to,
    subject: passed
      ? `The deletion deadline of ${end.organisation} has passed without an attestation`
      : `${end.organisation} must delete the shared data by ${end.deletionDueAt.slice(0, 10)}`,
    before: [
      passed
        ? `The deadline to delete the data shared under the ended agreement "${end.document}" of ` +
          `${end.organisation} was ${due}, and no deletion has been attested.`
        : `The agreement "${end.document}" of ${end.organisation} has ended: the data shared under it must be ` +
          `deleted by ${due}, less than ${end.threshold === '14d' ? '14 days' : '3 days'} from now.`,
      'Delete it, then attest the deletion on the Deletion page (an owner can). The list of what to ' +
        'delete is on that page too.',
    ],
    link: { href: `${publicUrl}/dashboard/partner/deletion`, label: 'Deletion' },
    after: [CHANGE_PREFERENCES],
  })
}

export function newDeviceMail(
  to: string,
  signIn: { at: string; browser: string; address: string },
  publicUrl: string,
): OutgoingMail {
  return compose({
    kind: 'new-device',
    to,
    subject: 'New sign-in to your Curriculum API account',
    before: [
      `Your Curriculum API account was signed in to at ${readable(signIn.at)} from a browser it had not used ` +
        `before: ${signIn.browser}, from the address ${signIn.address}.`,
      'If this was you, nothing needs doing. If not, end that session on your Account page and choose a new ' +
        'password.',
    ],
    link: { href: `${publicUrl}/dashboard/account`, label: 'Your account' },
    after: ['This is a security notice: it is always sent.'],
  })
}

/** A second factor added or removed: the authenticator app, or a passkey by its name. */
export interface SecondFactorChange {
  added: boolean
  /** `reset`: every factor removed at once, by the CLI for an operator who lost its phone. */
  factor: { kind: 'totp' } | { kind: 'passkey'; name: string } | { kind: 'reset' }
  /** Whether signing in asks for a second step after the change (another factor may remain). */
  twoStep: boolean
}

export function secondFactorChangedMail(to: string, change: SecondFactorChange, publicUrl: string): OutgoingMail {
  const { added, factor } = change
  if (factor.kind === 'reset')
    return compose({
      kind: 'second-factor-changed',
      to,
      subject: 'The second factor of your Curriculum API account was reset',
      before: [
        'The authenticator app, the recovery codes and the passkeys of your Curriculum API account were removed ' +
          'from the command line (curriculum operator reset-2fa), and its sessions ended. At your next sign-in you ' +
          'set up two-step sign-in again.',
        'If you did not ask for this, tell the other operators at once.',
      ],
      link: { href: `${publicUrl}/dashboard/login`, label: 'Sign in' },
      after: ['This is a security notice: it is always sent.'],
    })
  const what = factor.kind === 'totp' ? 'An authenticator app' : `A passkey named "${factor.name}"`
  const subject =
    factor.kind === 'totp'
      ? added
        ? 'An authenticator app was added to your Curriculum API account'
        : 'The authenticator app of your Curriculum API account was removed'
      : added
        ? 'A passkey was added to your Curriculum API account'
        : 'A passkey was removed from your Curriculum API account'
  const effect = added
    ? factor.kind === 'passkey'
      ? 'Signing in now asks for a second step, and the passkey can also sign in without the password.'
      : 'Signing in now asks for a second step: a code from the app.'
    : change.twoStep
      ? 'Signing in still asks for a second step, with the factors that are left.'
      : 'Signing in now asks for the password alone.'
  return compose({
    kind: 'second-factor-changed',
    to,
    subject,
    before: [
      `${what} was ${added ? 'added to' : 'removed from'} your Curriculum API account. ${effect}`,
      'If this was not you, choose a new password now and check your Account page.',
    ],
    link: { href: `${publicUrl}/dashboard/account`, label: 'Your account' },
    after: ['This is a security notice: it is always sent.'],
  })
}
