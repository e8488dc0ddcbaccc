/**
 * The Members page: who is in the organisation with which role, the pending invitations, and for
 * owners the forms that invite, change roles, remove and revoke; every member may leave.
 */
import type { FastifyRequest } from 'fastify'
import { MEMBER_ROLES, type MemberRole, may, ROLE_SUMMARIES } from '../../../../domain/member-roles.js'
import type { PendingInvitation } from '../../../../storage/invitation-repository.js'
import type { Member } from '../../../../storage/membership-repository.js'
import type { FieldErrors } from '../../../forms.js'
import { type Html, html } from '../../../html.js'
import { csrfField } from '../../../layout.js'
import { utcDay, utcMinute } from '../../../times.js'
import { inviteForm, revokeInvitationForm, type Roles, roleAndRemoveForms } from '../../../views/people-forms.js'
import { ACTION_HEADING, scrollTable, tableRow } from '../../../views/table.js'

export const MEMBERS_PATH = '/dashboard/partner/members'

const MEMBER_ROLE_CHOICES: Roles<MemberRole> = {
  all: MEMBER_ROLES,
  names: { owner: 'owner', developer: 'developer', viewer: 'viewer' },
  summaries: ROLE_SUMMARIES,
}

export interface MembersView {
  organisation: string
  role: MemberRole
  accountId: string
  members: readonly Member[]
  invitations: readonly PendingInvitation[]
  /** The organisation requires a second factor of its members. */
  twoStepRequired: boolean
  /** The members with a second factor. */
  withFactor: ReadonlySet<string>
  form?: { email: string; role: string; errors: FieldErrors }
}

function memberActions(request: FastifyRequest, view: MembersView, member: Member): Html {
  if (!may(view.role, 'members.manage')) return html``
  const person = { id: member.accountId, email: member.email, role: member.role }
  return roleAndRemoveForms(request, MEMBER_ROLE_CHOICES, person, `${MEMBERS_PATH}/${member.accountId}`)
}

function invitationsTable(request: FastifyRequest, view: MembersView): Html {
  if (view.invitations.length === 0) return html`<p class="empty">No invitation is pending.</p>`
  const owner = may(view.role, 'members.manage')
  return scrollTable({
    caption: 'Pending invitations, newest first',
    headings: ['Address', 'Role', 'Invited by', 'Expires', ...(owner ? [ACTION_HEADING] : [])],
    rows: view.invitations.map((invitation) =>
      tableRow([
        invitation.email,
        invitation.role,
        invitation.invitedBy,
        utcMinute(invitation.expiresAt),
        ...(owner ? [revokeInvitationForm(request, MEMBERS_PATH, invitation)] : []),
      ]),
    ),
  })
}

function twoStepSection(request: FastifyRequest, view: MembersView, owner: boolean): Html {
  const state = view.twoStepRequired
    ? html`<p>Every member needs two-step sign-in: a member without it is asked to set it up first.</p>`
    : html`<p>Two-step sign-in is each member's choice.</p>`
  if (!owner) return html`<h2>Two-step sign-in</h2>${state}`
  const next = view.twoStepRequired ? 'no' : 'yes'
  const label = view.twoStepRequired ? 'Stop requiring two-step sign-in' : 'Require two-step sign-in of every member'
  return html`<h2>Two-step sign-in</h2>${state}
<form method="post" action="${MEMBERS_PATH}/two-step" class="stack">${csrfField(request)}
  <input type="hidden" name="required" value="${next}">
  <div><button type="submit">${label}</button></div>
</form>`
}

export function membersBody(request: FastifyRequest, view: MembersView): Html {
  const owner = may(view.role, 'members.manage')
  const members = scrollTable({
    caption: 'Members',
    headings: ['Address', 'Role', 'Two-step sign-in', 'Since', ...(owner ? [ACTION_HEADING] : [])],
    rows: view.members.map((member) =>
      tableRow([
        member.accountId === view.accountId ? html`${member.email} (you)` : member.email,
        member.role,
        view.withFactor.has(member.accountId) ? 'on' : 'off',
        utcDay(member.since),
        ...(owner ? [memberActions(request, view, member)] : []),
      ]),
    ),
  })
  return html`<p>The members of <strong>${view.organisation}</strong>. You are a <strong>${view.role}</strong>:
${ROLE_SUMMARIES[view.role]}.</p>
${members}
<h2>Pending invitations</h2>
${invitationsTable(request, view)}
${
  owner
    ? inviteForm(request, {
        heading: 'Invite a member',
        action: `${MEMBERS_PATH}/invite`,
        hint: 'The link works for 7 days, once, and only for the account with this address.',
        roles: MEMBER_ROLE_CHOICES,
        defaultRole: 'developer',
        refused: view.form,
      })
    : ''
}
${twoStepSection(request, view, owner)}
<h2>Leave</h2>
<p>You stop being a member; the organisation keeps at least one owner.</p>
<form method="post" action="${MEMBERS_PATH}/leave" class="stack">${csrfField(request)}
  <div><button type="submit">Leave ${view.organisation}</button></div>
</form>`
}
