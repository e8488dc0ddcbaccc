/** The form that creates a test or live key, on the overview; sent back with what was typed and what is wrong. */
import type { FastifyRequest } from 'fastify'
import { SCOPES, type Scope } from '../../../../domain/scopes.js'
import { errorSummary, field, type FieldErrors } from '../../../forms.js'
import { type Html, html } from '../../../html.js'
import { csrfField } from '../../../layout.js'
import { SCOPE_LABELS } from '../scope-labels.js'

/** A key form sent back with what was typed and what is wrong with it. */
export interface KeyFormState {
  mode: 'test' | 'live'
  values: { name: string; expires: string; scopes: string[] }
  errors: FieldErrors
}

export function createKeyForm(
  request: FastifyRequest,
  mode: 'test' | 'live',
  allowed: readonly Scope[],
  studentScopesOpen: boolean,
  state?: KeyFormState,
): Html {
  const values = state?.mode === mode ? state.values : undefined
  const errors = state?.mode === mode ? state.errors : {}
  return html`<details${values === undefined ? '' : html` open`}><summary>Create a ${mode} key</summary>
${errorSummary(errors)}
<form method="post" action="/dashboard/partner/keys" class="stack" novalidate>
  ${csrfField(request)}
  <input type="hidden" name="mode" value="${mode}">
  ${field(`${mode}-name`, 'Name', {
    value: values?.name ?? '',
    hint: 'Required. What uses the key, to tell keys apart, e.g. "staging server".',
    required: true,
    errors,
  })}
  <fieldset><legend>Scopes (the catalog is always included)</legend>
  ${SCOPES.map((scope) => {
    const enabled = allowed.includes(scope) && (mode === 'test' || studentScopesOpen)
    const checked = enabled && (values === undefined || values.scopes.includes(scope))
    const why = allowed.includes(scope) ? 'needs an active data-sharing agreement' : 'not granted to your organisation'
    const box = html`<input type="checkbox" name="scopes" value="${scope}"${checked ? html` checked` : ''}${
      enabled ? '' : html` disabled`
    }>`
    return html`<label class="check">${box} ${SCOPE_LABELS[scope]}${
      enabled ? '' : html` <span class="hint">(${why})</span>`
    }</label>`
  })}
  </fieldset>
  ${field(`${mode}-expires`, 'Expires on (optional)', {
    type: 'date',
    value: values?.expires ?? '',
    hint: 'At 00:00 UTC that day. Leave empty for a key that does not expire.',
    errors,
  })}
  <div><button type="submit">Create ${mode} key</button></div>
</form></details>`
}
