/**
 * HTML built with a tagged template that escapes every interpolated value, so a name or a
 * reason typed by a partner can never become markup. Trusted fragments are `Html` values
 * (another template's result), passed through as they are.
 */
import { escapeHtml } from '../domain/html-escape.js'

export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value
  }
}

export { escapeHtml as escape } from '../domain/html-escape.js'

function render(value: unknown): string {
  if (value instanceof Html) return value.value
  if (Array.isArray(value)) return value.map(render).join('')
  if (value === null || value === undefined || value === false) return ''
  return escapeHtml(value)
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!
  return new Html(out)
}

/** Markup written by us, not by a user (e.g. a generated SVG). */
export function trusted(markup: string): Html {
  return new Html(markup)
}
