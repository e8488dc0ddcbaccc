/**
 * The invitation to become an operator, as a message (docs/accounts.md, "Operators"): who invites,
 * as what, and the link. It names accounts only, never a student.
 */
import { escapeHtml } from '../domain/html-escape.js'
import { OPERATOR_ROLE_NAMES, OPERATOR_ROLE_SUMMARIES, type OperatorRole } from '../domain/operator-roles.js'
import type { OutgoingMail } from './mail.js'

export interface OperatorInvitationMail {
  to: string
  role: OperatorRole
  /** The inviting admin's address. */
  invitedBy: string
  /** The link that opens the page choosing a password, with its token. */
  link: string
  /** When the link stops working (ISO). */
  expiresAt: string
}

/** `2026-03-09 09:00 UTC`: the link's end, as a person reads it. */
const readable = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`

export function operatorInvitationMail(invitation: OperatorInvitationMail): OutgoingMail {
  const { to, role, invitedBy, link } = invitation
  const lines = [
    `${invitedBy} invites you to run the Curriculum API as ${OPERATOR_ROLE_NAMES[role]}: ` +
      `${OPERATOR_ROLE_SUMMARIES[role]}.`,
    'Open this link to choose your password; you will then set up two-step sign-in with an authenticator app:',
    link,
    `The link works once, until ${readable(invitation.expiresAt)}, and only for the address ${to}.`,
    'If you did not expect this invitation, ignore this message: nothing happens unless the link is used.',
  ]
  const html = [
    `<p>${escapeHtml(lines[0])}</p>`,
    `<p>${escapeHtml(lines[1])}</p>`,
    `<p><a href="${escapeHtml(link)}">Accept the invitation and choose a password</a></p>`,
    `<p>${escapeHtml(lines[3])}</p>`,
    `<p>${escapeHtml(lines[4])}</p>`,
  ]
  return {
    // The same kind as a member's invitation: its link is one-time, so the Outbox page hides its text once sent.
    kind: 'invitation',
    to,
    subject: 'Invitation to run the Curriculum API as an operator',
    text: `${lines.join('\n\n')}\n`,
    html: `<!doctype html><html><body>${html.join('')}</body></html>`,
    link,
  }
}
