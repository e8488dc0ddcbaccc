/**
 * Recording an organisation's signed data-sharing agreement (a refused form comes back on the
 * organisation's page, input kept) and ending one; each is audited in the same transaction.
 */
import { NotFoundError } from '../../../../domain/errors.js'
import { listAgreements } from '../../../../storage/access-repository.js'
import { endAgreementAudited } from '../../../../cases/agreement-end.js'
import { recordAgreementAudited } from '../../../../cases/agreement-record.js'
import type { PagePlugin } from '../../../dashboard-context.js'
import { noticeContext } from '../../../notice-context.js'
import {
  dispositionDaysProblem,
  isDataCategory,
  MAX_DISPOSITION_DAYS,
  MAX_PURPOSE_LENGTH,
  normalizePurpose,
  purposeProblem,
} from '../../../../domain/agreement-terms.js'
import { type FieldErrors, type FormBody, list, text } from '../../../forms.js'
import { auditActor } from '../audit-actor.js'
import { organisationParam } from '../organisation-param.js'
import { sendOrganisationPage } from '../organisations/organisation-page.js'
import { operator } from '../../../page-roles.js'

/** What is wrong with a purpose (normalised), as the form says it; the same rules as purposeProblem. */
function purposeError(purpose: string): string | undefined {
  if (purposeProblem(purpose) === null) return undefined
  if (purpose === '') return 'Enter the purpose: what the partner may use the data for, as the agreement says.'
  if (purpose.length > MAX_PURPOSE_LENGTH) return `Shorten the purpose to ${MAX_PURPOSE_LENGTH} characters or fewer.`
  return 'Remove the control characters from the purpose.'
}

const DAYS = `0 to ${MAX_DISPOSITION_DAYS}`
const DISPOSITION_ERROR = `Enter the days after the end within which the partner must delete the data: ${DAYS}.`

/** A date field's value as 00:00 UTC that day, or NaN. */
function day(value: string): number {
  return /^\d{4}-\d{2}-\d{2}$/.test(value) ? Date.parse(`${value}T00:00:00.000Z`) : Number.NaN
}

export const agreementPages: PagePlugin = async (app, { context }) => {
  const { storage, clock } = context
  const db = storage.db

  app.post('/organisations/:id/agreements', operator, async (request, reply) => {
    const o = await organisationParam(context, request)
    const form = request.body as FormBody
    const values = {
      signed: text(form, 'signed'),
      expires: text(form, 'expires'),
      document: text(form, 'document'),
      purpose: normalizePurpose(text(form, 'purpose')),
      data: list(form, 'data'),
      disposition: text(form, 'disposition'),
    }
    const signed = day(values.signed)
    const expires = values.expires === '' ? null : day(values.expires)
    const errors: FieldErrors = {}
    if (Number.isNaN(signed)) errors.signed = 'Enter the date the agreement was signed.'
    if (expires !== null && Number.isNaN(expires))
      errors.expires = 'Enter the expiry date as a date, or leave it empty.'
    else if (expires !== null && !Number.isNaN(signed) && expires <= signed)
      errors.expires = 'The expiry date must be after the signing date.'
    if (values.document === '') errors.document = 'Enter the document reference: where the signed agreement is kept.'
    else if (values.document.length > 200)
      errors.document = 'Shorten the document reference to 200 characters or fewer.'
    const purpose = purposeError(values.purpose)
    if (purpose !== undefined) errors.purpose = purpose
    const data = values.data.filter(isDataCategory)
    if (data.length === 0) errors.data = 'Choose at least one kind of data the agreement shares.'
    const disposition = /^\d{1,5}$/.test(values.disposition) ? Number(values.disposition) : Number.NaN
    if (dispositionDaysProblem(disposition) !== null) errors.disposition = DISPOSITION_ERROR
    if (Object.keys(errors).length > 0)
      return sendOrganisationPage(request, reply, context, o, { agreement: { values, errors } }, 400)
    const row = await recordAgreementAudited(
      db,
      o,
      {
        signedAt: signed,
        expiresAt: expires,
        documentRef: values.document,
        purpose: values.purpose,
        dataCategories: data,
        dispositionDays: disposition,
      },
      { actor: auditActor(request) },
      clock.now(),
      noticeContext(context),
    )
    return reply.redirect(`/dashboard/operator/organisations/${o.id}?recorded=${row.id}`, 303)
  })

  app.post('/organisations/:id/agreements/:agreementId/end', operator, async (request, reply) => {
    const o = await organisationParam(context, request)
    const { agreementId } = request.params as { agreementId: string }
    const agreement = (await listAgreements(db, o.id)).find((a) => a.id === agreementId)
    if (agreement === undefined) throw new NotFoundError(agreementId)
    await endAgreementAudited(db, { organisation: o, agreement }, { actor: auditActor(request) }, clock.now())
    return reply.redirect(`/dashboard/operator/organisations/${o.id}?notice=agreement-ended`, 303)
  })
}
