/**
 * The dashboard's tables. Each sits in a wrapper that scrolls sideways on a narrow screen; the
 * wrapper is focusable and a labelled region, so keyboard and screen-reader users can scroll
 * it too.
 */
import { type Html, html } from '../html.js'

/** The heading of a column of buttons: read out, not shown. */
export const ACTION_HEADING = html`<span class="visually-hidden">Action</span>`

export interface TableSpec {
  headings: readonly (string | Html)[]
  rows: readonly Html[]
  /** For screen readers: the page's headings already say what the table is to a sighted reader. */
  caption?: string
}

export function scrollTable({ headings, rows, caption }: TableSpec): Html {
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label="Scrollable table"><table>${
    caption === undefined ? '' : html`<caption class="visually-hidden">${caption}</caption>`
  }
<thead><tr>${headings.map((heading) => html`<th scope="col">${heading}</th>`)}</tr></thead>
<tbody>${rows}</tbody></table></div>`
}

/** A row of data cells; a string cell is escaped, an `Html` one is markup. */
export function tableRow(cells: readonly unknown[]): Html {
  return html`<tr>${cells.map((cell) => html`<td>${cell}</td>`)}</tr>`
}

/** A state word (`active`, `revoked`, `suspended`…) in the colours the stylesheet gives it. */
export function stateBadge(state: string): Html {
  return html`<span class="state ${state}">${state}</span>`
}
