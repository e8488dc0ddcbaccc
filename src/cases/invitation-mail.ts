/**
 * The invitation to an organisation, as a message (docs/accounts.md): who invites, to which
 * organisation, as what, and the link. It names accounts and the organisation only, never a
 * student.
 */
import { escapeHtml } from '../domain/html-escape.js'
import { type MemberRole, ROLE_SUMMARIES } from '../domain/member-roles.js'
import type { OutgoingMail } from './mail.js'

export interface InvitationMail {
  to: string
  organisation: string
  role: MemberRole
  /** The inviting owner's address. */
  invitedBy: string
  /** The acceptance link, with its token. */
  link: string
  /** When the link stops working (ISO). */
  expiresAt: string
}

/** `2026-03-09 09:00 UTC`: the link's end, as a person reads it. */
const readable = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`

export function invitationMail(invitation: InvitationMail): OutgoingMail {
  const { to, organisation, role, invitedBy, link } = invitation
  const lines = [
    `${invitedBy} invites you to join ${organisation} on the Curriculum API as ${role}: ${ROLE_SUMMARIES[role]}.`,
    `To accept, sign in (or sign up) with this address, ${to}, and open this link:`,
    link,
    `The link works once, until ${readable(invitation.expiresAt)}, and only for the account with the address ${to}.`,
    'If you did not expect this invitation, ignore this message: nothing happens unless the link is opened.',
  ]
  const html = [
    `<p>${escapeHtml(lines[0])}</p>`,
    `<p>${escapeHtml(lines[1])}</p>`,
    `<p><a href="${escapeHtml(link)}">Accept the invitation to ${escapeHtml(organisation)}</a></p>`,
    `<p>${escapeHtml(lines[3])}</p>`,
    `<p>${escapeHtml(lines[4])}</p>`,
  ]
  return {
    kind: 'invitation',
    to,
    subject: `Invitation to join ${organisation} on the Curriculum API`,
    text: `${lines.join('\n\n')}\n`,
    html: `<!doctype html><html><body>${html.join('')}</body></html>`,
    link,
  }
}
