/**
 * Form fields with their labels, hints and errors wired for assistive technology
 * (aria-describedby, aria-invalid), and readers for url-encoded bodies.
 */
import { type Html, html } from './html.js'

export { isEmail } from '../domain/email.js'

export type FormBody = Record<string, string | string[] | undefined>
export type FieldErrors = Record<string, string>

export function text(body: FormBody | undefined, name: string): string {
  const value = body?.[name]
  return (Array.isArray(value) ? (value[0] ?? '') : (value ?? '')).trim()
}

export function list(body: FormBody | undefined, name: string): string[] {
  const value = body?.[name]
  return value === undefined ? [] : Array.isArray(value) ? value : [value]
}

export interface FieldOptions {
  type?: 'text' | 'email' | 'password' | 'url' | 'date' | 'number'
  value?: string
  hint?: string
  autocomplete?: string
  required?: boolean
  errors?: FieldErrors
}

/** The label, hint and error of a control, and the attributes that tie them to it. */
function labelled(name: string, label: string, options: FieldOptions): { before: Html; aria: Html } {
  const error = options.errors?.[name]
  const describedBy = [options.hint ? `${name}-hint` : '', error ? `${name}-error` : ''].filter(Boolean).join(' ')
  return {
    before: html`<label for="${name}">${label}</label>
  ${options.hint ? html`<p class="hint" id="${name}-hint">${options.hint}</p>` : ''}
  ${error ? html`<p class="field-error" id="${name}-error">${error}</p>` : ''}`,
    aria: html`${options.required ? html` required` : ''}${
      describedBy ? html` aria-describedby="${describedBy}"` : ''
    }${error ? html` aria-invalid="true"` : ''}`,
  }
}

export function field(name: string, label: string, options: FieldOptions = {}): Html {
  const { before, aria } = labelled(name, label, options)
  return html`<div>
  ${before}
  <input id="${name}" name="${name}" type="${options.type ?? 'text'}" value="${options.value ?? ''}"${
    options.autocomplete ? html` autocomplete="${options.autocomplete}"` : ''
  }${aria}>
</div>`
}

export function textarea(name: string, label: string, options: FieldOptions = {}): Html {
  const { before, aria } = labelled(name, label, options)
  return html`<div>
  ${before}
  <textarea id="${name}" name="${name}" rows="4"${aria}>${options.value ?? ''}</textarea>
</div>`
}

/** Listed first on a page that failed validation, with links to each field. */
export function errorSummary(errors: FieldErrors): Html {
  const entries = Object.entries(errors)
  if (entries.length === 0) return html``
  return html`<div class="error-summary" role="alert">
  <h2>There ${entries.length === 1 ? 'is a problem' : `are ${entries.length} problems`}</h2>
  <ul>${entries.map(([name, message]) => html`<li><a href="#${name}">${message}</a></li>`)}</ul>
</div>`
}

/** An https:// address with a dotted host name: the form asks for exactly that. */
export function isWebsite(value: string): boolean {
  try {
    const url = new URL(value)
    return url.protocol === 'https:' && url.hostname.includes('.')
  } catch {
    return false
  }
}

/** The `token` of a mailed link's address, as it came (never trimmed: a token is matched exactly). */
export function linkToken(request: { query: unknown }): string {
  return String((request.query as Record<string, unknown> | undefined)?.token ?? '')
}
