/**
 * The Operators page: who runs the service with which role, whether each has two-step sign-in and
 * when it was last active, the pending invitations, and the forms that change them.
 */
import type { FastifyRequest } from 'fastify'
import {
  OPERATOR_ROLE_NAMES,
  OPERATOR_ROLE_SUMMARIES,
  OPERATOR_ROLES,
  type OperatorRole,
} from '../../../../domain/operator-roles.js'
import type { OperatorListing } from '../../../../storage/operator-repository.js'
import type { OperatorInvitationRow } from '../../../../storage/tables.js'
import { errorSummary, type FieldErrors, field } from '../../../forms.js'
import { type Html, html } from '../../../html.js'
import { csrfField } from '../../../layout.js'
import { utcDay, utcMinute } from '../../../times.js'
import { ACTION_HEADING, scrollTable, tableRow } from '../../../views/table.js'

export const OPERATORS_PATH = '/dashboard/operator/operators'

export interface OperatorsView {
  accountId: string
  operators: readonly OperatorListing[]
  invitations: readonly OperatorInvitationRow[]
  form?: { email: string; role: string; errors: FieldErrors }
}

function roleSelect(id: string, selected: string, label: Html): Html {
  return html`<label for="${id}">${label}</label>
<select id="${id}" name="role">${OPERATOR_ROLES.map(
    (role) =>
      html`<option value="${role}"${role === selected ? html` selected` : ''}>${OPERATOR_ROLE_NAMES[role]}</option>`,
  )}</select>`
}

function operatorActions(request: FastifyRequest, operator: OperatorListing): Html {
  const base = `${OPERATORS_PATH}/${operator.id}`
  const hidden = html`<span class="visually-hidden"> for ${operator.email}</span>`
  return html`<form method="post" action="${base}/role" class="inline">${csrfField(request)}
${roleSelect(`role-${operator.id}`, operator.role, html`Role${hidden}`)}
<button type="submit">Change role${hidden}</button></form>
<form method="post" action="${base}/remove" class="inline">${csrfField(request)}
<button type="submit">Remove${hidden}</button></form>`
}

function inviteForm(request: FastifyRequest, view: OperatorsView): Html {
  const errors = view.form?.errors ?? {}
  return html`<h2>Invite an operator</h2>
${errorSummary(errors)}
<form method="post" action="${OPERATORS_PATH}/invite" class="stack" novalidate>
  ${csrfField(request)}
  ${field('email', 'E-mail address', {
    type: 'email',
    value: view.form?.email ?? '',
    required: true,
    errors,
    hint: 'An address without an account. The link works for 7 days, once, for this address only.',
  })}
  <div>${roleSelect('invite-role', view.form?.role ?? 'operator', html`Role`)}</div>
  <ul class="hint">${OPERATOR_ROLES.map(
    (role: OperatorRole) =>
      html`<li><strong>${OPERATOR_ROLE_NAMES[role]}</strong>: ${OPERATOR_ROLE_SUMMARIES[role]}</li>`,
  )}</ul>
  <div><button type="submit">Send the invitation</button></div>
</form>`
}

function revokeForm(request: FastifyRequest, invitation: OperatorInvitationRow): Html {
  const what = html`<span class="visually-hidden"> the invitation of ${invitation.email}</span>`
  return html`<form method="post" action="${OPERATORS_PATH}/invitations/${invitation.id}/revoke">${csrfField(request)}
<button type="submit">Revoke${what}</button></form>`
}

function invitationsTable(request: FastifyRequest, view: OperatorsView): Html {
  if (view.invitations.length === 0) return html`<p class="empty">No invitation is pending.</p>`
  return scrollTable({
    caption: 'Pending invitations, newest first',
    headings: ['Address', 'Role', 'Invited by', 'Expires', ACTION_HEADING],
    rows: view.invitations.map((invitation) =>
      tableRow([
        invitation.email,
        OPERATOR_ROLE_NAMES[invitation.role],
        invitation.invited_by,
        utcMinute(invitation.expires_at),
        revokeForm(request, invitation),
      ]),
    ),
  })
}

export function operatorsBody(request: FastifyRequest, view: OperatorsView): Html {
  const operators = scrollTable({
    caption: 'Operators',
    headings: ['Address', 'Role', 'Two-step sign-in', 'Last active', 'Since', ACTION_HEADING],
    rows: view.operators.map((operator) =>
      tableRow([
        operator.id === view.accountId ? html`${operator.email} (you)` : operator.email,
        OPERATOR_ROLE_NAMES[operator.role],
        operator.secondFactor ? 'on' : 'not set up yet',
        operator.lastActiveAt === null ? 'no live session' : utcMinute(operator.lastActiveAt),
        utcDay(operator.createdAt),
        operatorActions(request, operator),
      ]),
    ),
  })
  return html`<p>Who runs the service. An <strong>operator admin</strong> may do everything, these operators
included; an <strong>operator</strong> everything else. There is always an operator admin: the last one can
neither be removed nor made an operator. An operator who lost the phone with its recovery codes is reset from
the command line: <code>curriculum operator reset-2fa --email &lt;address&gt;</code>.</p>
${operators}
<h2>Pending invitations</h2>
${invitationsTable(request, view)}
${inviteForm(request, view)}`
}
