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
import type { FieldErrors } from '../../../forms.js'
import { type Html, html } from '../../../html.js'
import { utcDay, utcMinute } from '../../../times.js'
import { inviteForm, revokeInvitationForm, type Roles, roleAndRemoveForms } from '../../../views/people-forms.js'
import { ACTION_HEADING, scrollTable, tableRow } from '../../../views/table.js'

export const OPERATORS_PATH = '/dashboard/operator/operators'

const OPERATOR_ROLE_CHOICES: Roles<OperatorRole> = {
  all: OPERATOR_ROLES,
  names: OPERATOR_ROLE_NAMES,
  summaries: OPERATOR_ROLE_SUMMARIES,
}

export interface OperatorsView {
  accountId: string
  operators: readonly OperatorListing[]
  invitations: readonly OperatorInvitationRow[]
  form?: { email: string; role: string; errors: FieldErrors }
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
        revokeInvitationForm(request, OPERATORS_PATH, invitation),
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
        roleAndRemoveForms(request, OPERATOR_ROLE_CHOICES, operator, `${OPERATORS_PATH}/${operator.id}`),
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
${inviteForm(request, {
  heading: 'Invite an operator',
  action: `${OPERATORS_PATH}/invite`,
  hint: 'An address without an account. The link works for 7 days, once, for this address only.',
  roles: OPERATOR_ROLE_CHOICES,
  defaultRole: 'operator',
  refused: view.form,
})}`
}
