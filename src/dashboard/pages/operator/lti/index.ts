/**
 * The operator's LTI pages (docs/lti.md#the-dashboard): the registrations and registration URLs,
 * a registration's page (activate, deactivate after asking, deployments), registering a platform
 * by hand, and rotating the tool key. Every change is a case that writes its audit row.
 */
import {
  activateRegistration,
  addDeployment,
  createRegistrationLink,
  deactivateRegistration,
  dropDeployment,
  RegistrationExistsError,
  recordRegistration,
  revokeLink,
} from '../../../../cases/lti-registrations.js'
import { loadToolKey, rotateToolKey } from '../../../../cases/lti-tool-key.js'
import { isoAt } from '../../../../clock.js'
import { NotFoundError } from '../../../../domain/errors.js'
import { TOOL_SCOPES } from '../../../../domain/lti-claims.js'
import { toolUrls } from '../../../../domain/lti-tool-configuration.js'
import { UUID } from '../../../../domain/uuid.js'
import { DEPLOYMENT_ID, manualRegistrationProblems } from '../../../../platforms/platform-registration.js'
import { listOrganisationsByName } from '../../../../storage/access-repository.js'
import {
  registrationLinkById,
  registrationLinkSummaries,
  registrationSummaries,
} from '../../../../storage/lti-registration-list-repository.js'
import { registrationById } from '../../../../storage/lti-registration-repository.js'
import { retiredToolKeys } from '../../../../storage/lti-tool-key-repository.js'
import { listSchools } from '../../../../storage/school-repository.js'
import type { PagePlugin } from '../../../dashboard-context.js'
import { type FieldErrors, type FormBody, text } from '../../../forms.js'
import { operator } from '../../../page-roles.js'
import { sendPage } from '../../../send-page.js'
import { auditActor } from '../audit-actor.js'
import { rotateConfirmPage } from './key-rotation.js'
import { emptyManualForm, type ManualForm, manualFormBody, readManualForm } from './manual-form.js'
import { deactivateConfirmPage, sendRegistrationPage } from './registration-page.js'
import { REGISTRATION_SECTIONS } from './registration-sections.js'
import { LTI_PATH, ltiBody, newLinkBody, registrationPath } from './views.js'

export const ltiPages: PagePlugin = async (app, { context }) => {
  const { storage, clock } = context
  const db = storage.db
  const urls = toolUrls(context.mail.publicUrl)
  const allowLoopback = context.ltiAllowLoopback ?? false
  const audit = (request: Parameters<typeof auditActor>[0]) => ({ actor: auditActor(request) })

  const choices = async () => ({
    organisations: await listOrganisationsByName(db, 'partner'),
    schools: await listSchools(db),
  })

  /** The registration the route's `:id` names, with its names and deployments; the dashboard's 404 otherwise. */
  const summaryOf = async (id: string) => {
    if (!UUID.test(id)) throw new NotFoundError(`no LTI registration ${id}`)
    const registration = await registrationById(db, id)
    if (registration === undefined) throw new NotFoundError(`no LTI registration ${id}`)
    const summary = (await registrationSummaries(db, registration.organisation_id)).find(
      (s) => s.registration.id === id,
    )
    if (summary === undefined) throw new NotFoundError(`no LTI registration ${id}`)
    return summary
  }
  const idOf = (request: { params: unknown }) => (request.params as { id: string }).id

  const overview = async () => {
    const key = await loadToolKey(db)
    return {
      registrations: await registrationSummaries(db),
      links: await registrationLinkSummaries(db),
      ...(await choices()),
      urls,
      key: { current: key.publicJwk.kid, retired: await retiredToolKeys(db, isoAt(clock.now())) },
    }
  }

  app.get('/lti', operator, async (request, reply) =>
    sendPage(request, reply, 'LTI', ltiBody(request, await overview()), 200, LTI_PATH),
  )

  app.post('/lti/links', operator, async (request, reply) => {
    const form = request.body as FormBody
    const { organisations, schools } = await choices()
    const organisation = organisations.find((o) => o.id === text(form, 'organisation'))
    const schoolId = text(form, 'school')
    const school = schools.find((s) => s.id === schoolId)
    if (organisation === undefined || (schoolId !== '' && school === undefined)) {
      const refused = ltiBody(request, await overview(), 'Choose a partner organisation, and a school listed or none.')
      return sendPage(request, reply, 'LTI', refused, 400, LTI_PATH)
    }
    const link = await createRegistrationLink(
      db,
      { organisationId: organisation.id, schoolId: school?.id ?? null },
      audit(request),
      clock,
    )
    const body = newLinkBody(urls.registration(link.token), organisation.name, school?.name ?? null)
    return sendPage(request, reply, 'New registration URL', body, 200, LTI_PATH)
  })

  app.post('/lti/links/:id/revoke', operator, async (request, reply) => {
    const id = idOf(request)
    if (!UUID.test(id) || (await registrationLinkById(db, id)) === undefined)
      throw new NotFoundError(`no registration URL ${id}`)
    await revokeLink(db, id, audit(request), clock)
    return reply.redirect(`${LTI_PATH}?notice=link-revoked#links`, 303)
  })

  const manualPage = async (
    request: Parameters<typeof auditActor>[0],
    reply: Parameters<typeof sendPage>[1],
    form: ManualForm,
    errors: FieldErrors,
    status: number,
  ) =>
    sendPage(
      request,
      reply,
      'Register a platform by hand',
      manualFormBody(request, form, errors, await choices()),
      status,
      LTI_PATH,
    )

  app.get('/lti/registrations/new', operator, async (request, reply) =>
    manualPage(request, reply, emptyManualForm(), {}, 200),
  )

  app.post('/lti/registrations', operator, async (request, reply) => {
    const form = readManualForm(request.body as FormBody)
    const errors: FieldErrors = manualRegistrationProblems(form.fields, allowLoopback)
    const { organisations, schools } = await choices()
    if (!organisations.some((o) => o.id === form.organisationId))
      errors.organisation = 'Choose the organisation that will own the students.'
    if (form.schoolId !== '' && !schools.some((s) => s.id === form.schoolId)) errors.school = 'Choose a school listed.'
    if (Object.keys(errors).length > 0) return manualPage(request, reply, form, errors, 400)
    const f = form.fields
    try {
      const registration = await recordRegistration(
        db,
        {
          organisationId: form.organisationId,
          schoolId: form.schoolId === '' ? null : form.schoolId,
          linkId: null,
          method: 'manual',
          name: f.name,
          issuer: f.issuer,
          clientId: f.clientId,
          authLoginUrl: f.authLoginUrl,
          tokenUrl: f.tokenUrl,
          tokenAudience: f.tokenAudience === '' ? null : f.tokenAudience,
          jwksUri: f.jwksUri,
          product: null,
          scopes: TOOL_SCOPES,
          deploymentIds: f.deploymentIds,
        },
        audit(request),
        clock,
      )
      return reply.redirect(`${registrationPath(registration.id)}?notice=registered`, 303)
    } catch (error) {
      if (!(error instanceof RegistrationExistsError)) throw error
      return manualPage(
        request,
        reply,
        form,
        { clientId: `${error.message[0]!.toUpperCase()}${error.message.slice(1)}.` },
        409,
      )
    }
  })

  const registrationPage = async (
    request: Parameters<typeof auditActor>[0],
    reply: Parameters<typeof sendPage>[1],
    deploymentForm?: { value: string; errors: FieldErrors },
    status = 200,
  ) => {
    const summary = await summaryOf(idOf(request))
    const link =
      summary.registration.link_id === null ? undefined : await registrationLinkById(db, summary.registration.link_id)
    const sections = await Promise.all(REGISTRATION_SECTIONS.map((section) => section(request, context, summary)))
    return sendRegistrationPage(
      request,
      reply,
      { summary, link, sections, ...(deploymentForm === undefined ? {} : { deploymentForm }) },
      status,
    )
  }

  app.get('/lti/registrations/:id', operator, async (request, reply) => registrationPage(request, reply))

  app.post('/lti/registrations/:id/activate', operator, async (request, reply) => {
    const { registration } = await summaryOf(idOf(request))
    await activateRegistration(db, registration.id, audit(request), clock)
    return reply.redirect(`${registrationPath(registration.id)}?notice=activated`, 303)
  })

  app.get('/lti/registrations/:id/deactivate', operator, async (request, reply) =>
    deactivateConfirmPage(request, reply, await summaryOf(idOf(request))),
  )

  app.post('/lti/registrations/:id/deactivate', operator, async (request, reply) => {
    const { registration } = await summaryOf(idOf(request))
    await deactivateRegistration(db, registration.id, audit(request), clock)
    return reply.redirect(`${registrationPath(registration.id)}?notice=deactivated`, 303)
  })

  app.post('/lti/registrations/:id/deployments', operator, async (request, reply) => {
    const { registration } = await summaryOf(idOf(request))
    const deployment = text(request.body as FormBody, 'deployment')
    if (!DEPLOYMENT_ID.test(deployment))
      return registrationPage(
        request,
        reply,
        {
          value: deployment,
          errors: { deployment: 'Enter the deployment id: 1 to 255 ASCII characters, without spaces.' },
        },
        400,
      )
    await addDeployment(db, registration.id, deployment, audit(request), clock)
    return reply.redirect(`${registrationPath(registration.id)}?notice=deployment-added#deployments`, 303)
  })

  app.post('/lti/registrations/:id/deployments/remove', operator, async (request, reply) => {
    const { registration } = await summaryOf(idOf(request))
    const deployment = text(request.body as FormBody, 'deployment')
    await dropDeployment(db, registration.id, deployment, audit(request), clock)
    return reply.redirect(`${registrationPath(registration.id)}?notice=deployment-removed#deployments`, 303)
  })

  app.get('/lti/key/rotate', operator, async (request, reply) =>
    rotateConfirmPage(request, reply, (await loadToolKey(db)).publicJwk.kid),
  )

  app.post('/lti/key/rotate', operator, async (request, reply) => {
    await rotateToolKey(db, audit(request), clock)
    return reply.redirect(`${LTI_PATH}?notice=key-rotated#tool-key`, 303)
  })
}
