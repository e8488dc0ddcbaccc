/**
 * The forms the Members and Operators pages share: a person's role and removal, the invitation
 * form, and revoking an invitation. Each page gives its own roles, with their names and what
 * each may do.
 */
import type { FastifyRequest } from 'fastify'
import { errorSummary, type FieldErrors, field } from '../forms.js'
import { type Html, html } from '../html.js'
import { csrfField } from '../layout.js'

export interface Roles<R extends string> {
  all: readonly R[]
  /** What a person reads for each role. */
  names: Readonly<Record<R, string>>
  summaries: Readonly<Record<R, string>>
}

function roleSelect<R extends string>(roles: Roles<R>, id: string, selected: string, label: Html): Html {
  return html`<label for="${id}">${label}</label>
<select id="${id}" name="role">${roles.all.map(
    (role) => html`<option value="${role}"${role === selected ? html` selected` : ''}>${roles.names[role]}</option>`,
  )}</select>`
}

/** "Change role" and "Remove" for one person, posting to `${base}/role` and `${base}/remove`. */
export function roleAndRemoveForms<R extends string>(
  request: FastifyRequest,
  roles: Roles<R>,
  person: { id: string; email: string; role: string },
  base: string,
): Html {
  const hidden = html`<span class="visually-hidden"> for ${person.email}</span>`
  return html`<form method="post" action="${base}/role" class="inline">${csrfField(request)}
${roleSelect(roles, `role-${person.id}`, person.role, html`Role${hidden}`)}
<button type="submit">Change role${hidden}</button></form>
<form method="post" action="${base}/remove" class="inline">${csrfField(request)}
<button type="submit">Remove${hidden}</button></form>`
}

export interface InviteForm<R extends string> {
  heading: string
  action: string
  hint: string
  roles: Roles<R>
  defaultRole: R
  /** What was typed and what is wrong with it, when the form was refused. */
  refused?: { email: string; role: string; errors: FieldErrors } | undefined
}

export function inviteForm<R extends string>(request: FastifyRequest, form: InviteForm<R>): Html {
  const errors = form.refused?.errors ?? {}
  const { roles } = form
  return html`<h2>${form.heading}</h2>
${errorSummary(errors)}
<form method="post" action="${form.action}" class="stack" novalidate>
  ${csrfField(request)}
  ${field('email', 'E-mail address', {
    type: 'email',
    value: form.refused?.email ?? '',
    required: true,
    errors,
    hint: form.hint,
  })}
  <div>${roleSelect(roles, 'invite-role', form.refused?.role ?? form.defaultRole, html`Role`)}</div>
  <ul class="hint">${roles.all.map(
    (role) => html`<li><strong>${roles.names[role]}</strong>: ${roles.summaries[role]}</li>`,
  )}</ul>
  <div><button type="submit">Send the invitation</button></div>
</form>`
}

/** "Revoke" for a pending invitation, posting to `${base}/invitations/<id>/revoke`. */
export function revokeInvitationForm(request: FastifyRequest, base: string, invitation: { id: string; email: string }) {
  const what = html`<span class="visually-hidden"> the invitation of ${invitation.email}</span>`
  return html`<form method="post" action="${base}/invitations/${invitation.id}/revoke">${csrfField(request)}
<button type="submit">Revoke${what}</button></form>`
}
