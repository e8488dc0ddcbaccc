/**
 * A table of API keys: prefix, scopes, created, last used, expiry, state, and for keys still in
 * force a link to the page that asks before revoking (revoke-confirm.ts; the same address takes
 * the POST). Never the key itself: it is not stored.
 */
import { keyRowState } from '../../domain/api-key.js'
import type { ApiKeyRow } from '../../storage/tables.js'
import { type Html, html } from '../html.js'
import { utcMinute } from '../times.js'
import { ACTION_HEADING } from './table.js'

const HEADINGS = ['Key', 'Name', 'Scopes', 'Created', 'Last used', 'Expires', 'State', ACTION_HEADING]

function day(iso: string | null): string {
  return iso === null ? '' : utcMinute(iso)
}

function scopes(row: ApiKeyRow): Html | Html[] {
  if (row.scopes === '') return html`<span class="hint">catalog only</span>`
  return row.scopes.split(' ').map((scope) => html`<code>${scope}</code> `)
}

function revokeLabel(row: ApiKeyRow): string {
  return `Revoke key ${row.display_prefix} (${row.name})…`
}

export function keysTable(
  rows: readonly ApiKeyRow[],
  now: number,
  revokeAction: (row: ApiKeyRow) => string,
  caption: string,
): Html {
  if (rows.length === 0) return html`<p class="empty">No keys yet.</p>`
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label="Scrollable table"><table>
<caption class="visually-hidden">${caption}</caption>
<thead><tr>${HEADINGS.map((heading) => html`<th scope="col">${heading}</th>`)}</tr></thead>
<tbody>
${rows.map((row) => {
  const state = keyRowState(row, now)
  return html`<tr>
  <td><code>${row.display_prefix}\u2026</code></td>
  <td>${row.name}</td>
  <td>${scopes(row)}</td>
  <td>${day(row.created_at)}</td>
  <td>${row.last_used_at === null ? html`<span class="hint">never</span>` : day(row.last_used_at)}</td>
  <td>${row.expires_at === null ? html`<span class="hint">never</span>` : day(row.expires_at)}</td>
  <td><span class="state ${state}">${state}</span></td>
  <td>${
    state === 'active'
      ? html`<a class="button danger" href="${revokeAction(row)}" aria-label="${revokeLabel(row)}">Revoke\u2026</a>`
      : ''
  }</td>
</tr>`
})}
</tbody></table></div>`
}
