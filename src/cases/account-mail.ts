/**
 * The account messages: what each says, in plain text and HTML. They name the service, the
 * recipient's own address at most, and one link; never anyone else, and never a child.
 */
import { escapeHtml } from '../domain/html-escape.js'
import type { MailKind, OutgoingMail } from './mail.js'

export interface Message {
  kind: MailKind
  to: string
  subject: string
  /** Paragraphs before the link. */
  before: readonly string[]
  link?: { href: string; label: string }
  /** Paragraphs after the link. */
  after: readonly string[]
}

/** A message of paragraphs and at most one link, in plain text and HTML. */
export function compose(message: Message): OutgoingMail {
  const { link } = message
  const text = [...message.before, ...(link ? [`${link.label}: ${link.href}`] : []), ...message.after]
  const html = [
    ...message.before.map((p) => `<p>${escapeHtml(p)}</p>`),
    ...(link ? [`<p><a href="${escapeHtml(link.href)}">${escapeHtml(link.label)}</a></p>`] : []),
    ...message.after.map((p) => `<p>${escapeHtml(p)}</p>`),
  ]
  return {
    kind: message.kind,
    to: message.to,
    subject: message.subject,
    text: `${text.join('\n\n')}\n`,
    html: `<!doctype html><html><body>${html.join('')}</body></html>`,
    link: link?.href ?? null,
  }
}

const IGNORE = 'If you did not ask for this, ignore this message: nothing changes.'

export function verificationMail(to: string, link: string): OutgoingMail {
  return compose({
    kind: 'verify-email',
    to,
    subject: 'Verify your e-mail address for the Curriculum API',
    before: [
      'Confirm that this address is yours to finish setting up your Curriculum API account. ' +
        'Your sandbox works already; applying for live access needs a verified address.',
    ],
    link: { href: link, label: 'Verify this address' },
    after: ['The link works once, for 24 hours.', IGNORE],
  })
}

export function passwordResetMail(to: string, link: string): OutgoingMail {
  return compose({
    kind: 'password-reset',
    to,
    subject: 'Choose a new password for the Curriculum API',
    before: ['Someone, probably you, asked to choose a new password for the Curriculum API account of this address.'],
    link: { href: link, label: 'Choose a new password' },
    after: ['The link works once, for 1 hour. Choosing a new password signs the account out everywhere.', IGNORE],
  })
}

export function signUpAgainMail(to: string, signIn: string, forgot: string): OutgoingMail {
  return compose({
    kind: 'sign-up-again',
    to,
    subject: 'You already have a Curriculum API account',
    before: [
      'Someone, probably you, tried to create a Curriculum API account with this address. It has an account ' +
        'already, so nothing was created.',
      `Sign in at ${signIn}. If you forgot the password, choose a new one at ${forgot}.`,
    ],
    after: [IGNORE],
  })
}

export function emailChangeMail(to: string, link: string): OutgoingMail {
  return compose({
    kind: 'email-change',
    to,
    subject: 'Confirm your new e-mail address for the Curriculum API',
    before: ['Confirm that this address is yours to make it the sign-in address of your Curriculum API account.'],
    link: { href: link, label: 'Use this address' },
    after: ['The link works once, for 24 hours. Until it is used, the account keeps its old address.', IGNORE],
  })
}

export function emailChangeNotice(to: string, newAddress: string, forgot: string): OutgoingMail {
  return compose({
    kind: 'email-change-notice',
    to,
    subject: 'Your Curriculum API sign-in address is being changed',
    before: [
      `Someone signed in to your Curriculum API account asked to change its address to ${newAddress}. ` +
        'The change happens when the link sent there is used.',
      `If this was not you, choose a new password now at ${forgot}: that signs the account out everywhere and ` +
        'cancels the change.',
    ],
    after: [],
  })
}

export function passwordChangedMail(to: string, forgot: string): OutgoingMail {
  return compose({
    kind: 'password-changed',
    to,
    subject: 'Your Curriculum API password was changed',
    before: [
      'The password of your Curriculum API account was just changed, and its other sessions were ended.',
      `If this was not you, choose a new password now at ${forgot}.`,
    ],
    after: [],
  })
}
