/** What an access application asks for, shown alike to the partner who sent it and the operator who reviews it. */
import type { ApplicationRow } from '../../storage/tables.js'
import { type Html, html } from '../html.js'

/** The application's website, contact, scopes and intended use, as `<dt>`/`<dd>` lines of a `<dl>`. */
export function applicationRequestRows(a: ApplicationRow): Html {
  return html`  <dt>Website</dt><dd>${a.website}</dd>
  <dt>Contact</dt><dd>${a.contact_name} (${a.contact_email})</dd>
  <dt>Access asked for</dt><dd>Catalog${a.requested_scopes
    .split(' ')
    .filter(Boolean)
    .map((scope) => html`, <code>${scope}</code>`)}</dd>
  <dt>Intended use</dt><dd>${a.intended_use}</dd>`
}
