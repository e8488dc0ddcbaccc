/**
 * The access application: the form (again after a rejection, with the reason), or, once sent,
 * the application as sent and its state. Approval creates the partner's organisation.
 */
import { submitApplication } from '../../../../cases/applications.js'
import { isScope } from '../../../../domain/scopes.js'
import { applicationsOf } from '../../../../storage/application-repository.js'
import type { PagePlugin } from '../../../dashboard-context.js'
import { type FieldErrors, type FormBody, isEmail, isWebsite, list, text } from '../../../forms.js'
import { sendPage } from '../../../send-page.js'
import { partnerView } from '../partner-view.js'
import { applicationDetails, applicationForm, verifyFirst } from './views.js'
import { partner } from '../../../page-roles.js'

export const applicationPages: PagePlugin = async (app, { context }) => {
  const { storage, clock } = context
  const db = storage.db

  app.get('/application', partner, async (request, reply) => {
    const v = await partnerView(context, request)
    const latest = (await applicationsOf(db, v.account.id))[0]
    if (latest !== undefined && latest.state !== 'rejected') {
      const body = applicationDetails(latest)
      return sendPage(request, reply, 'Your application', body, 200, '/dashboard/partner/application')
    }
    if (v.account.email_verified_at === null) {
      const body = verifyFirst(request, v.account.email)
      return sendPage(request, reply, 'Verify your address to apply', body, 200, '/dashboard/partner/application')
    }
    return sendPage(
      request,
      reply,
      'Apply for live access',
      applicationForm(request, {}, {}, latest),
      200,
      '/dashboard/partner/application',
    )
  })

  app.post('/application', partner, async (request, reply) => {
    const v = await partnerView(context, request)
    const form = request.body as FormBody
    const values = {
      organisationName: text(form, 'organisationName'),
      website: text(form, 'website'),
      contactName: text(form, 'contactName'),
      contactEmail: text(form, 'contactEmail'),
      intendedUse: text(form, 'intendedUse'),
      scopes: list(form, 'scopes').filter(isScope),
      acknowledgement: text(form, 'acknowledgement'),
    }
    const errors: FieldErrors = {}
    if (values.organisationName.length < 2 || values.organisationName.length > 120)
      errors.organisationName = 'Enter your organisation’s name (2 to 120 characters).'
    if (!isWebsite(values.website)) errors.website = 'Enter the website address, starting with https://'
    if (values.contactName.length < 2 || values.contactName.length > 120)
      errors.contactName = 'Enter the name of a contact person.'
    if (!isEmail(values.contactEmail)) errors.contactEmail = 'Enter an e-mail address like name@example.org.'
    if (values.intendedUse.length < 20 || values.intendedUse.length > 4000)
      errors.intendedUse = 'Describe the intended use in 20 to 4,000 characters.'
    if (values.scopes.length > 0 && values.acknowledgement !== 'yes') {
      errors.acknowledgement = 'Student access needs a signed data-sharing agreement: confirm that you understand.'
    }
    if (Object.keys(errors).length > 0) {
      const latest = (await applicationsOf(db, v.account.id))[0]
      return sendPage(
        request,
        reply,
        'Apply for live access',
        applicationForm(request, values, errors, latest),
        400,
        '/dashboard/partner/application',
      )
    }
    await submitApplication(db, { accountId: v.account.id, requestedScopes: values.scopes, ...values }, clock.now())
    return reply.redirect('/dashboard/partner/application?notice=application-submitted', 303)
  })
}
