/**
 * Registering a platform by hand: the values the platform's administrator reads off its own
 * configuration (Moodle's "View configuration details", Schoology's "API Info" and "Configure",
 * a Canvas developer key), for the organisation that will own its students.
 */
import type { FastifyRequest } from 'fastify'
import type { ManualRegistrationFields } from '../../../../platforms/platform-registration.js'
import type { SchoolSummary } from '../../../../storage/school-repository.js'
import type { OrganisationRow } from '../../../../storage/tables.js'
import { errorSummary, type FieldErrors, type FormBody, field, text, textarea } from '../../../forms.js'
import { type Html, html } from '../../../html.js'
import { csrfField } from '../../../layout.js'
import { LTI_PATH } from './views.js'

export interface ManualForm {
  fields: ManualRegistrationFields
  organisationId: string
  schoolId: string
}

export function emptyManualForm(): ManualForm {
  return {
    fields: {
      name: '',
      issuer: '',
      clientId: '',
      deploymentIds: [],
      authLoginUrl: '',
      tokenUrl: '',
      tokenAudience: '',
      jwksUri: '',
    },
    organisationId: '',
    schoolId: '',
  }
}

/** The form as sent: one deployment id per line (or separated by spaces or commas). */
export function readManualForm(body: FormBody): ManualForm {
  return {
    fields: {
      name: text(body, 'name'),
      issuer: text(body, 'issuer'),
      clientId: text(body, 'clientId'),
      deploymentIds: [
        ...new Set(
          text(body, 'deploymentIds')
            .split(/[\s,]+/)
            .filter((id) => id !== ''),
        ),
      ],
      authLoginUrl: text(body, 'authLoginUrl'),
      tokenUrl: text(body, 'tokenUrl'),
      tokenAudience: text(body, 'tokenAudience'),
      jwksUri: text(body, 'jwksUri'),
    },
    organisationId: text(body, 'organisation'),
    schoolId: text(body, 'school'),
  }
}

export function manualFormBody(
  request: FastifyRequest,
  form: ManualForm,
  errors: FieldErrors,
  choices: { organisations: readonly OrganisationRow[]; schools: readonly SchoolSummary[] },
): Html {
  const f = form.fields
  const option = (value: string, label: string, selected: string) =>
    html`<option value="${value}"${value === selected ? html` selected` : ''}>${label}</option>`
  const organisationError = errors.organisation
  const invalidOrganisation =
    organisationError === undefined ? '' : html` aria-invalid="true" aria-describedby="organisation-error"`
  const url = (name: keyof ManualRegistrationFields, label: string, hint?: string) =>
    field(name, label, {
      type: 'url',
      value: String(f[name]),
      errors,
      required: true,
      ...(hint === undefined ? {} : { hint }),
    })
  return html`<p>For a platform without dynamic registration, or one registered by its administrator first: enter the
values it shows for this tool. The tool's own values are on the <a href="${LTI_PATH}#tool-values">LTI page</a>. The
registration waits, pending, until you activate it.</p>
${errorSummary(errors)}
<form method="post" action="${LTI_PATH}/registrations" class="stack" novalidate>
  ${csrfField(request)}
  ${field('name', 'Name', { value: f.name, errors, required: true, hint: 'How you will know it on this dashboard.' })}
  <div><label for="organisation">Organisation that will own the students</label>
  ${
    organisationError === undefined
      ? ''
      : html`<p class="field-error" id="organisation-error">
  ${organisationError}</p>`
  }
  <select id="organisation" name="organisation"${invalidOrganisation}>${choices.organisations.map((o) =>
    option(o.id, o.name, form.organisationId),
  )}</select></div>
  <div><label for="school">School its students attend (optional)</label>
  <select id="school" name="school">${option('', 'None', form.schoolId)}${choices.schools.map((s) =>
    option(s.id, s.name, form.schoolId),
  )}</select></div>
  ${url('issuer', 'Issuer (platform id)', 'Moodle: Platform ID; hosted Canvas: https://canvas.instructure.com.')}
  ${field('clientId', 'Client id', { value: f.clientId, errors, required: true })}
  ${textarea('deploymentIds', 'Deployment ids', {
    value: f.deploymentIds.join('\n'),
    errors,
    required: true,
    hint: 'One per line.',
  })}
  ${url('authLoginUrl', 'Authentication request URL', 'The platform’s OpenID Connect authorization endpoint.')}
  ${url('tokenUrl', 'Access token URL')}
  ${field('tokenAudience', 'Token audience (optional)', {
    value: f.tokenAudience,
    errors,
    hint: 'Only when the platform names an authorization server other than its access token URL.',
  })}
  ${url('jwksUri', 'Public key set URL')}
  <div><button type="submit">Register the platform</button></div>
</form>`
}
