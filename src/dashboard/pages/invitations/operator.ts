/**
 * The page an operator invitation's link opens (cases/operators.ts): its holder chooses a password
 * (the sign-up's rules), which creates the operator account with the invited address and role and
 * signs it in; the two-step gate then allows nothing but enrolling a second factor.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { acceptOperatorInvitation, operatorInvitationProblem } from '../../../cases/operators.js'
import { OPERATOR_ROLE_NAMES } from '../../../domain/operator-roles.js'
import { hashPassword, passwordProblem } from '../../../domain/passwords.js'
import { findOperatorInvitationByToken } from '../../../storage/operator-repository.js'
import type { OperatorInvitationRow } from '../../../storage/tables.js'
import type { PagePlugin } from '../../dashboard-context.js'
import { DashboardError } from '../../dashboard-error.js'
import { isBearerToken } from '../../../domain/bearer-token.js'
import { errorSummary, type FieldErrors, field, type FormBody, linkToken, text } from '../../forms.js'
import { html } from '../../html.js'
import { csrfField } from '../../layout.js'
import { sendPage } from '../../send-page.js'
import { ENROL_PATH } from '../../two-step-gate.js'

const visitor = { config: { dashboard: 'public' as const } }
const PATH = '/dashboard/invitations/operator'

export const operatorInvitationPages: PagePlugin = async (app, { context }) => {
  const { storage, clock, sessions, guard } = context
  const db = storage.db

  /** The pending invitation the token names; a 404 or 410 page saying why not otherwise. */
  async function pendingInvitation(request: FastifyRequest, token: string): Promise<OperatorInvitationRow> {
    if (request.account !== null)
      throw new DashboardError(
        409,
        'Sign out first',
        `You are signed in as ${request.account.email}. An operator invitation makes a new account: sign out, ` +
          'then open the link from the message again.',
      )
    const invitation = isBearerToken(token) ? await findOperatorInvitationByToken(db, token) : undefined
    const problem = operatorInvitationProblem(invitation, clock.now())
    if (problem !== undefined || invitation === undefined)
      throw new DashboardError(
        problem?.detail === 'unknown' ? 404 : 410,
        'This invitation link does not work',
        problem?.message ?? '',
      )
    return invitation
  }

  function form(
    request: FastifyRequest,
    reply: FastifyReply,
    token: string,
    invitation: OperatorInvitationRow,
    errors: FieldErrors = {},
  ) {
    const body = html`${errorSummary(errors)}
<p>You are invited to run the Curriculum API as <strong>${OPERATOR_ROLE_NAMES[invitation.role]}</strong>, with the
address <strong>${invitation.email}</strong> (invited by ${invitation.invited_by}). Choose your password; next you
set up two-step sign-in with an authenticator app, which every operator account needs.</p>
<form method="post" action="${PATH}" class="stack" novalidate>
  ${csrfField(request)}
  <input type="hidden" name="token" value="${token}">
  <input type="hidden" name="email" value="${invitation.email}" autocomplete="username">
  ${field('password', 'Password', {
    type: 'password',
    autocomplete: 'new-password',
    required: true,
    errors,
    hint: 'At least 12 characters, and not a common password.',
  })}
  <div><button type="submit">Create my operator account</button></div>
</form>`
    return sendPage(request, reply, 'Become an operator', body, Object.keys(errors).length > 0 ? 400 : 200)
  }

  app.get('/invitations/operator', visitor, async (request, reply) => {
    const token = linkToken(request)
    return form(request, reply, token, await pendingInvitation(request, token))
  })

  app.post('/invitations/operator', visitor, async (request, reply) => {
    const body = request.body as FormBody
    const token = text(body, 'token')
    const invitation = await pendingInvitation(request, token)
    const password = text(body, 'password')
    const weak = passwordProblem(password, invitation.email)
    if (weak !== null) return form(request, reply, token, invitation, { password: weak })
    const passwordHash = await guard.hash(request.ip, () => hashPassword(password))
    const account = await acceptOperatorInvitation(db, token, passwordHash, clock.now())
    await sessions.signIn(request, reply, account)
    return reply.redirect(`${ENROL_PATH}?notice=two-step-required`, 303)
  })
}
