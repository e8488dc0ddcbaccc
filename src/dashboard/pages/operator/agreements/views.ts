/**
 * An organisation's data-sharing agreements on its page: what the last one recorded means, the
 * table with an End button for those in force or pending, and the form that records one.
 */
import type { FastifyRequest } from 'fastify'
import type { AgreementRow } from '../../../../storage/tables.js'
import { DATA_CATEGORIES, DATA_CATEGORY_LABELS, type DataCategory } from '../../../../domain/agreement-terms.js'
import { errorSummary, field, type FieldErrors, textarea } from '../../../forms.js'
import { type Html, html } from '../../../html.js'
import { csrfField } from '../../../layout.js'
import { utcDay } from '../../../times.js'
import { agreementBadge, agreementState } from '../../../views/agreement-state.js'
import { dataText, dispositionText, purposeText } from '../../../views/agreement-terms.js'
import { ACTION_HEADING, scrollTable, tableRow } from '../../../views/table.js'

/** The agreement form sent back with what was typed and what is wrong with it. */
export interface AgreementForm {
  values: { signed: string; expires: string; document: string; purpose: string; data: string[]; disposition: string }
  errors: FieldErrors
}

/** What the last recorded agreement means, from the data (never from text in the address). */
export function recordedNotice(agreements: readonly AgreementRow[], recordedId: unknown, now: number): Html {
  const recorded = agreements.find((a) => a.id === recordedId)
  if (recorded === undefined) return html``
  const { state, label } = agreementState(recorded, now)
  const anyInForce = agreements.some((a) => agreementState(a, now).state === 'active')
  const meanwhile = anyInForce
    ? 'Another agreement is in force: student endpoints work meanwhile.'
    : 'Student endpoints stay refused.'
  const effect =
    state === 'active'
      ? 'It is in force: student endpoints work for this organisation.'
      : `It is not in force (it ${label}), so it does not open student endpoints` +
        `${state === 'pending' ? ' before that day' : ''}. ${meanwhile}`
  return html`<p class="notice" role="status">Agreement ${recorded.document_ref} was recorded. ${effect}</p>`
}

/** `base` is the organisation page's address. */
export function agreementsTable(
  request: FastifyRequest,
  base: string,
  agreements: readonly AgreementRow[],
  now: number,
): Html {
  const endButton = (a: AgreementRow) =>
    html`<button type="submit" class="danger" aria-label="End agreement ${a.document_ref}">End</button>`
  const endForm = (a: AgreementRow) =>
    html`<form method="post" action="${base}/agreements/${a.id}/end">${csrfField(request)}${endButton(a)}</form>`
  return scrollTable({
    headings: ['Document', 'Signed', 'Expires', 'State', 'Purpose', 'Data shared', 'Disposition', ACTION_HEADING],
    rows: agreements.map((a) => {
      const { state } = agreementState(a, now)
      return tableRow([
        a.document_ref,
        utcDay(a.signed_at),
        a.expires_at === null ? 'never' : utcDay(a.expires_at),
        agreementBadge(a, now),
        purposeText(a),
        dataText(a),
        dispositionText(a),
        state === 'active' || state === 'pending' ? endForm(a) : '',
      ])
    }),
  })
}

/** Open when it comes back refused; `dispositionDays` fills a new form (AGREEMENT_DISPOSITION_DAYS). */
export function agreementForm(
  request: FastifyRequest,
  base: string,
  form: AgreementForm | undefined,
  dispositionDays: number,
): Html {
  const errors = form?.errors ?? {}
  const shared = form?.values.data ?? DATA_CATEGORIES
  const dataError = errors.data
  const box = (category: DataCategory) =>
    html`<label class="check"><input type="checkbox" name="data" value="${category}"${
      shared.includes(category) ? html` checked` : ''
    }> ${DATA_CATEGORY_LABELS[category]}</label>`
  return html`<details${form === undefined ? '' : html` open`}><summary>Record a signed agreement</summary>
${errorSummary(errors)}
<form method="post" action="${base}/agreements" class="stack" novalidate>
  ${csrfField(request)}
  ${field('signed', 'Signed on', {
    type: 'date',
    required: true,
    value: form?.values.signed ?? '',
    errors,
    hint: 'The agreement is in force from 00:00 UTC that day.',
  })}
  ${field('expires', 'Expires on (optional)', {
    type: 'date',
    value: form?.values.expires ?? '',
    errors,
    hint: 'At 00:00 UTC that day; after the signing date.',
  })}
  ${field('document', 'Document reference', {
    required: true,
    value: form?.values.document ?? '',
    errors,
    hint: 'Where the signed document is kept, e.g. DSA-2026-014.',
  })}
  ${textarea('purpose', 'Purpose', {
    required: true,
    value: form?.values.purpose ?? '',
    errors,
    hint:
      'What the partner may use the data for, as the agreement says. ' +
      'Partners see it, and so do disclosure reports.',
  })}
  <fieldset id="data"${dataError ? html` aria-describedby="data-error"` : ''}><legend>Data shared</legend>
  ${dataError ? html`<p class="field-error" id="data-error">${dataError}</p>` : ''}
  ${DATA_CATEGORIES.map(box)}
  </fieldset>
  ${field('disposition', 'Delete within (days after the end)', {
    type: 'number',
    required: true,
    value: form?.values.disposition ?? String(dispositionDays),
    errors,
    hint: 'The partner must delete the data within this many days of the agreement\u2019s end: 0 to 3650.',
  })}
  <div><button type="submit">Record agreement</button></div>
</form></details>`
}
