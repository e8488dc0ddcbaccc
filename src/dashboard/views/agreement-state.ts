/**
 * An agreement's state as the operator reads it, with the date that matters: "in force",
 * "starts on 2026-12-01", "expired on 2026-06-01", "ended on 2026-05-02". Recording an agreement
 * signed in the future, or one that has already expired, does not open student endpoints, and
 * the page must not say it does.
 */
import { type AgreementState, agreementState as stateAt } from '../../domain/agreements.js'
import type { AgreementRow } from '../../storage/tables.js'
import { type Html, html } from '../html.js'
import { utcDay } from '../times.js'

export type { AgreementState }

/** The state (domain/agreements.ts decides it) and the words and date the operator reads. */
export function agreementState(row: AgreementRow, now: number): { state: AgreementState; label: string } {
  const state = stateAt({ signedAt: row.signed_at, expiresAt: row.expires_at, endedAt: row.ended_at }, now)
  switch (state) {
    case 'ended':
      return { state, label: `ended on ${utcDay(row.ended_at!)}` }
    case 'expired':
      return { state, label: `expired on ${utcDay(row.expires_at!)}` }
    case 'pending':
      return { state, label: `starts on ${utcDay(row.signed_at)}` }
    case 'active':
      return { state, label: 'in force' }
  }
}

export function agreementBadge(row: AgreementRow, now: number): Html {
  const { state, label } = agreementState(row, now)
  return html`<span class="state ${state}">${label}</span>`
}

/** What an organisation's agreements mean for its student endpoints now. */
export function studentAccessSummary(rows: readonly AgreementRow[], now: number): Html {
  const states = rows.map((row) => ({ row, ...agreementState(row, now) }))
  const inForce = states.find((s) => s.state === 'active')
  if (inForce !== undefined) return html`<span class="state active">in force</span> (${inForce.row.document_ref})`
  const next = states
    .filter((s) => s.state === 'pending')
    .sort((a, b) => (a.row.signed_at < b.row.signed_at ? -1 : 1))[0]
  if (next !== undefined)
    return html`none in force; ${next.row.document_ref} <span class="state pending">${next.label}</span>`
  return html`none in force`
}
