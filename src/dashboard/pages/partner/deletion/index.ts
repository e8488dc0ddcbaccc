/**
 * What the partner must delete once a data-sharing agreement has ended, and its attestation that
 * it did (storage/agreement-end-repository.ts, cases/deletion-list.ts, cases/deletion-attestation.ts).
 * The list download is a disclosure of the students' ids (action `deletion.list`), recorded a
 * page at a time before that page is sent, and opens only from this dashboard; the attestation is
 * a form behind a confirmation page, recorded with the time and the account.
 */
import { Readable } from 'node:stream'
import type { Kysely } from 'kysely'
import { ConflictError, NotFoundError } from '../../../../domain/errors.js'
import { UUID } from '../../../../domain/uuid.js'
import { csvRecord } from '../../../../domain/csv-cell.js'
import { type AgreementEnd, agreementEnds } from '../../../../storage/agreement-end-repository.js'
import { attestDeletion } from '../../../../cases/deletion-attestation.js'
import { disclosedDeletionList } from '../../../../cases/deletion-list.js'
import type { Database } from '../../../../storage/tables.js'
import type { DashboardContext, PagePlugin } from '../../../dashboard-context.js'
import { sendPage } from '../../../send-page.js'
import { utcMinute } from '../../../times.js'
import { partnerView } from '../partner-view.js'
import { attestConfirmBody, BASE, deletionBody } from './views.js'
import { partner, partnerMay } from '../../../page-roles.js'

const idsDownload = { config: { dashboard: 'partner' as const, studentData: true as const } }

/** The end of the signed-in partner's organisation that `:agreementId` names; the 404 page otherwise. */
async function endParam(context: DashboardContext, organisationId: string | undefined, params: unknown) {
  const { agreementId } = params as { agreementId: string }
  if (organisationId === undefined || !UUID.test(agreementId)) throw new NotFoundError(agreementId)
  const ends = await agreementEnds(context.storage.db, context.clock.now(), organisationId)
  const end = ends.find((candidate) => candidate.agreement.id === agreementId.toLowerCase())
  if (end === undefined) throw new NotFoundError(agreementId)
  return end
}

export const LIST_COLUMNS = ['student_id', 'asked_by', 'asked_at', 'webhook'] as const

/** The list as CSV, each page's ids recorded as disclosed to `accountId` before the page is sent. */
async function* listCsv(db: Kysely<Database>, end: AgreementEnd, accountId: string, now: number) {
  yield csvRecord(LIST_COLUMNS)
  for await (const page of disclosedDeletionList(db, end, accountId, now))
    yield page.map((e) => csvRecord([e.studentId, e.askedBy, e.askedAt, e.webhook])).join('')
}

export const deletionPages: PagePlugin = async (app, { context }) => {
  const { storage, clock } = context

  app.get('/deletion', partner, async (request, reply) => {
    const v = await partnerView(context, request)
    const ends: AgreementEnd[] =
      v.organisation === undefined ? [] : await agreementEnds(storage.db, clock.now(), v.organisation.id)
    const body = deletionBody(ends, (request.query as Record<string, unknown>).attested)
    return sendPage(request, reply, 'Data to delete', body, 200, BASE)
  })

  app.get('/deletion/:agreementId/students.csv', idsDownload, async (request, reply) => {
    const account = request.account!
    const end = await endParam(context, account.organisation_id ?? undefined, request.params)
    reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="students-to-delete-${end.agreement.id}.csv"`)
    // A HEAD request (Fastify answers it with this handler) is shown nothing, so nothing is recorded.
    if (request.method === 'HEAD') return reply.send()
    return reply.send(Readable.from(listCsv(storage.db, end, account.id, clock.now()), { highWaterMark: 1 }))
  })

  app.get('/deletion/:agreementId/attest', partnerMay('deletion.attest'), async (request, reply) => {
    const v = await partnerView(context, request)
    const end = await endParam(context, v.organisation?.id, request.params)
    if (end.attestation !== null) return reply.redirect(BASE, 303)
    const body = attestConfirmBody(request, v.organisation!.name, end)
    return sendPage(request, reply, 'Attest the deletion?', body, 200, BASE)
  })

  app.post('/deletion/:agreementId/attest', partnerMay('deletion.attest'), async (request, reply) => {
    const account = request.account!
    const end = await endParam(context, account.organisation_id ?? undefined, request.params)
    const result = await attestDeletion(
      storage.db,
      { organisationId: end.organisationId, agreementId: end.agreement.id, by: { accountId: account.id } },
      clock.now(),
    )
    if (result.outcome === 'already')
      throw new ConflictError(
        `The deletion under agreement ${end.agreement.document_ref} was attested already, at ` +
          `${utcMinute(result.end.attestation!.attestedAt)}: it is recorded once.`,
      )
    if (result.outcome !== 'attested') throw new NotFoundError(end.agreement.id)
    return reply.redirect(`${BASE}?attested=${end.agreement.id}`, 303)
  })
}
