/**
 * A partner's keys: creating a test key (sandbox) or a live one (their organisation, only the
 * scopes granted and student scopes only under an agreement), the new key's one-time page, and
 * revoking a key of theirs after a confirmation page.
 */
import { type CappedKey, createKey, revokeKey, rollKey } from '../../../../cases/api-keys.js'
import { ConflictError } from '../../../../domain/errors.js'
import { rollEnd } from '../../../../domain/key-roll.js'
import { isScope } from '../../../../domain/scopes.js'
import { findApiKey, KeyLimitError } from '../../../../storage/access-repository.js'
import type { FastifyRequest } from 'fastify'
import type { PagePlugin } from '../../../dashboard-context.js'
import { DashboardError } from '../../../dashboard-error.js'
import { type FieldErrors, type FormBody, list, text } from '../../../forms.js'
import { keyGonePage, newKeyPage, showNewKey } from '../../../views/new-key.js'
import { revokeConfirmPage } from '../../../views/revoke-confirm.js'
import { rollKeyPage } from '../../../views/roll-key.js'
import { sendOverview } from '../overview/overview-page.js'
import { ownKeys, partnerView } from '../partner-view.js'
import { partner, partnerMay } from '../../../page-roles.js'

export const keyPages: PagePlugin = async (app, { context }) => {
  const { storage, clock } = context
  const db = storage.db

  app.post('/keys', partnerMay('keys.manage'), async (request, reply) => {
    const v = await partnerView(context, request)
    const form = request.body as FormBody
    const mode = text(form, 'mode') === 'live' ? 'live' : 'test'
    const values = {
      name: text(form, `${mode}-name`),
      expires: text(form, `${mode}-expires`),
      scopes: list(form, 'scopes'),
    }
    const scopes = values.scopes.filter(isScope)
    const errors: FieldErrors = {}
    // Required, as GitHub requires a token's note: "live key" told nobody which integration it was.
    if (values.name === '') errors[`${mode}-name`] = 'Give the key a name: what will use it, e.g. "staging server".'
    else if (values.name.length > 80) errors[`${mode}-name`] = 'Shorten the name to 80 characters or fewer.'
    const expiresAt = values.expires === '' ? null : Date.parse(`${values.expires}T00:00:00.000Z`)
    if (expiresAt !== null && (Number.isNaN(expiresAt) || expiresAt <= clock.now())) {
      errors[`${mode}-expires`] = 'Choose a date in the future, or leave it empty for a key that does not expire.'
    }
    let organisationId = v.sandboxId
    if (mode === 'live') {
      if (v.organisation === undefined)
        throw new DashboardError(
          403,
          'No live access yet',
          'Live keys come with an approved application. Use test keys meanwhile.',
        )
      if (v.organisation.status !== 'active')
        throw new DashboardError(
          403,
          'Organisation suspended',
          'Your organisation is suspended; keys cannot be created.',
        )
      const allowed = v.organisation.allowed_scopes.split(' ')
      const refused = scopes.filter((scope) => !allowed.includes(scope) || !v.agreementActive)
      if (refused.length > 0) {
        throw new DashboardError(
          403,
          'Scope not available',
          `Your organisation cannot give a live key ${refused.join(' or ')}: ` +
            'it was not granted, or no data-sharing agreement is in force.',
        )
      }
      organisationId = v.organisation.id
    }
    if (Object.keys(errors).length > 0) return sendOverview(request, reply, context, v, { mode, values, errors }, 400)
    const spec: CappedKey = {
      organisationId,
      name: values.name,
      scopes,
      expiresAt,
      mode,
      createdBy: v.account.id,
      maxActiveKeys: context.maxKeysPerOrganisation,
    }
    const created = await createKey(db, spec, clock.now()).catch((error: unknown) => {
      if (error instanceof KeyLimitError) return error
      throw error
    })
    if (created instanceof KeyLimitError) {
      errors[`${mode}-name`] =
        `Key limit reached: you already have ${created.limit} active ${mode} keys, the most allowed. ` +
        'Revoke a key you no longer use, then create this one.'
      return sendOverview(request, reply, context, v, { mode, values, errors }, 409)
    }
    return showNewKey(request, reply, context, created)
  })

  app.get('/keys/shown/:view', partner, async (request, reply) => {
    const { view: viewToken } = request.params as { view: string }
    const shown = await context.keyViews.open(request, viewToken)
    const row = shown === undefined ? undefined : await findApiKey(db, shown.keyId)
    if (shown === undefined || row === undefined) return keyGonePage(request, reply)
    return newKeyPage(request, reply, context, { ...shown, row, viewToken })
  })

  app.post('/keys/shown/:view/hide', partner, async (request, reply) => {
    await context.keyViews.hide(request, (request.params as { view: string }).view)
    return reply.redirect('/dashboard/partner?notice=key-hidden', 303)
  })

  /** One of the signed-in partner's own keys, or 404. */
  const ownKey = async (request: FastifyRequest) => {
    const v = await partnerView(context, request)
    const { id } = request.params as { id: string }
    const keys = await ownKeys(context, v)
    const key = [...keys.test, ...keys.live].find((k) => k.id === id)
    if (key === undefined) throw new DashboardError(404, 'Not found', 'There is no such key among yours.')
    return { v, key }
  }

  app.get('/keys/:id/roll', partnerMay('keys.manage'), async (request, reply) => {
    const { key } = await ownKey(request)
    const where = { action: `/dashboard/partner/keys/${key.id}/roll`, back: '/dashboard/partner' }
    return rollKeyPage(request, reply, key, clock.now(), where)
  })

  app.post('/keys/:id/roll', partnerMay('keys.manage'), async (request, reply) => {
    const { v, key } = await ownKey(request)
    const form = request.body as FormBody
    const where = { action: `/dashboard/partner/keys/${key.id}/roll`, back: '/dashboard/partner' }
    const overlap = text(form, 'overlap')
    const date = text(form, 'roll-date')
    const now = clock.now()
    const end = rollEnd(overlap === 'date' ? date : overlap, now)
    if ('refused' in end) {
      const errors = { [overlap === 'date' ? 'roll-date' : 'overlap']: end.refused }
      return rollKeyPage(request, reply, key, now, where, { overlap, date, errors }, 400)
    }
    const rolled = await rollKey(db, { key, end: end.end, createdBy: v.account.id }, now).catch((error: unknown) => {
      if (error instanceof ConflictError) return undefined
      throw error
    })
    // Revoked, rolled or expired meanwhile (another tab, a teammate): the page says which.
    if (rolled === undefined) return rollKeyPage(request, reply, (await findApiKey(db, key.id)) ?? key, now, where)
    return showNewKey(request, reply, context, rolled)
  })

  app.get('/keys/:id/revoke', partnerMay('keys.manage'), async (request, reply) => {
    const { key } = await ownKey(request)
    return revokeConfirmPage(request, reply, key, clock.now(), {
      action: `/dashboard/partner/keys/${key.id}/revoke`,
      back: '/dashboard/partner',
    })
  })

  app.post('/keys/:id/revoke', partnerMay('keys.manage'), async (request, reply) => {
    const { key } = await ownKey(request)
    await revokeKey(db, key.id, clock.now())
    return reply.redirect('/dashboard/partner?notice=key-revoked', 303)
  })
}
