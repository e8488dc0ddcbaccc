/**
 * A table of API keys: prefix, scopes, created, last used, expiry, state, and for keys still in
 * force links to the page that asks before revoking (revoke-confirm.ts; the same address takes
 * the POST) and to the one that rolls it (roll-key.ts). Never the key itself: it is not stored.
 */
import { keyRowState } from '../../domain/api-key.js'
import type { ApiKeyRow } from '../../storage/tables.js'
import { type Html, html } from '../html.js'
import { utcMinute } from '../times.js'
import { ACTION_HEADING } from './table.js'

const HEADINGS = ['Key', 'Name', 'Scopes', 'Created', 'Last used', 'Expires', 'State', ACTION_HEADING]

/** How long after its recorded time a last use may have been (services/key-usage.ts keeps it to 5 minutes). */
const LAST_USED_WINDOW_MS = 5 * 60_000

function day(iso: string | null): string {
  return iso === null ? '' : utcMinute(iso)
}

function scopes(row: ApiKeyRow): Html | Html[] {
  if (row.scopes === '') return html`<span class="hint">catalog only</span>`
  return row.scopes.split(' ').map((scope) => html`<code>${scope}</code> `)
}

/** The last use as it is known: a 5-minute window, and the client address and family seen then. */
function lastUsed(row: ApiKeyRow): Html {
  if (row.last_used_at === null) return html`<span class="hint">never</span>`
  const until = new Date(Date.parse(row.last_used_at) + LAST_USED_WINDOW_MS).toISOString()
  const client = [row.last_used_address, row.last_used_agent].filter((part) => part !== null && part !== '')
  return html`<span title="Kept to 5 minutes">${row.last_used_at.slice(0, 16).replace('T', ' ')}\u2013${until.slice(
    11,
    16,
  )} UTC</span>${client.length === 0 ? '' : html`<br><span class="hint">${client.join(' \u00b7 ')}</span>`}`
}

/** A rolled key still in force says until when, and which key replaced it. */
function stateCell(row: ApiKeyRow, rows: readonly ApiKeyRow[], now: number): Html {
  const state = keyRowState(row, now)
  const badge = html`<span class="state ${state}">${state}</span>`
  if (row.rolled_at === null || state !== 'active') return badge
  const replacement = rows.find((other) => other.id === row.replaced_by)
  const by = replacement === undefined ? '' : html`; replaced by <code>${replacement.display_prefix}\u2026</code>`
  return html`<span class="state rolled">rolled</span> <span class="hint">stops ${day(row.expires_at)}${by}</span>`
}

/** Where a key's actions lead: the page that asks before revoking, and the one that rolls it. */
export interface KeyActions {
  revoke: (row: ApiKeyRow) => string
  roll?: (row: ApiKeyRow) => string
}

function actions(row: ApiKeyRow, state: string, links: KeyActions): Html | string {
  if (state !== 'active') return ''
  const revoke = html`<a class="button danger" href="${links.revoke(row)}"
  aria-label="Revoke key ${row.display_prefix} (${row.name})\u2026">Revoke\u2026</a>`
  if (links.roll === undefined || row.rolled_at !== null) return revoke
  return html`<a class="button" href="${links.roll(row)}"
  aria-label="Roll key ${row.display_prefix} (${row.name})\u2026">Roll\u2026</a> ${revoke}`
}

export function keysTable(rows: readonly ApiKeyRow[], now: number, links: KeyActions, caption: string): Html {
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
  <td>${lastUsed(row)}</td>
  <td>${row.expires_at === null ? html`<span class="hint">never</span>` : day(row.expires_at)}</td>
  <td>${stateCell(row, rows, now)}</td>
  <td>${actions(row, state, links)}</td>
</tr>`
})}
</tbody></table></div>`
}
