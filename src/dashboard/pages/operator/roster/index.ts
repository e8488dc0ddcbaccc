/**
 * Importing a district's roster from the dashboard: upload the OneRoster export (a .zip; a file
 * upload without JavaScript is a multipart form), see the preview (counts and every problem),
 * then confirm or cancel. The upload waits in a private file (services/roster-uploads.ts) that
 * the import or the cancel removes; the upload, the import and the cancel are audit rows.
 *
 * The preview and the import run in this process and yield to the event loop between batches of
 * students, so requests keep being answered meanwhile; on SQLite the import commits batch by
 * batch, on PostgreSQL in one transaction (cases/roster-import/import.ts says why). Both go through the
 * one import run (imports/import-run.ts) with the OneRoster format (cases/roster-import/spec.ts).
 */
import multipart from '@fastify/multipart'
import type { FastifyRequest } from 'fastify'
import { TIER_IDS, type TierId } from '../../../../domain/tiers.js'
import {
  ErasureNotConfirmed,
  RosterImportRefused,
  type RosterOutcome,
  type RosterPreview,
} from '../../../../cases/roster-import/import.js'
import { rosterImport } from '../../../../cases/roster-import/spec.js'
import { previewImport, writeImport } from '../../../../imports/import-run.js'
import { RosterUploads } from '../../../../services/roster-uploads.js'
import { auditAction } from '../../../../cases/operator-action.js'
import type { PagePlugin } from '../../../dashboard-context.js'
import { DashboardError } from '../../../dashboard-error.js'
import { type FormBody, text } from '../../../forms.js'
import { sendPage } from '../../../send-page.js'
import { auditActor } from '../audit-actor.js'
import { readUploadForm } from './upload-form.js'
import { outcomeBody, previewBody, problemsBody, uploadBody } from './views.js'
import { operator } from '../../../page-roles.js'

const PAGE = '/dashboard/operator/roster'
/** An upload not imported or cancelled within this time is removed. */
const UPLOAD_LIFETIME_MS = 60 * 60_000
const SWEEP_EVERY_MS = 5 * 60_000

/** What the upload's state file holds: counts and the operator's choices, never a child's data. */
interface UploadState {
  accountId: string
  fileName: string
  tier: TierId
  preview: RosterPreview
  outcome?: RosterOutcome
}

const gone = () =>
  new DashboardError(404, 'This upload is gone', 'It was imported, cancelled or too old. Upload the export again.')

export const rosterPages: PagePlugin = async (app, { context }) => {
  const { storage, clock } = context
  const settings = context.rosterUploads ?? { dir: 'data/roster-uploads', maxBytes: 256 * 1024 * 1024 }
  const uploads = new RosterUploads(settings.dir, settings.maxBytes)
  const sweep = () => uploads.sweep(Date.now(), UPLOAD_LIFETIME_MS)
  sweep()
  const timer = setInterval(sweep, SWEEP_EVERY_MS).unref()
  app.addHook('onClose', async () => clearInterval(timer))
  // A turn of the event loop between batches: on SQLite every statement runs on this thread.
  const pause = storage.engine === 'sqlite' ? () => new Promise<void>((resolve) => setImmediate(resolve)) : undefined
  const open = <T>(work: (s: typeof storage) => Promise<T>) => work(storage)
  const audit = (
    request: FastifyRequest,
    action: string,
    token: string,
    detail: Record<string, unknown>,
    db = storage.db,
  ) =>
    auditAction(db, { actor: auditActor(request), action, target: `roster:${token.slice(0, 8)}`, detail }, clock.now())
  const tokenOf = (request: FastifyRequest) => String((request.params as { token?: unknown }).token ?? '')
  /** The upload's state at `stage`, if this operator uploaded it. */
  const own = (request: FastifyRequest, state: UploadState | undefined) =>
    state !== undefined && state.accountId === request.account!.id ? state : undefined

  await app.register(multipart, {
    limits: { fileSize: uploads.maxBytes, files: 1, fields: 3, parts: 4, fieldSize: 1024, headerPairs: 50 },
    // A file over the limit is cut, then removed with a page of its own, rather than thrown.
    throwFileSizeLimit: false,
  })

  app.get('/roster', operator, async (request, reply) => {
    const cancelled = (request.query as Record<string, unknown>).cancelled === '1'
    return sendPage(request, reply, 'Import a roster', uploadBody(request, uploads.maxBytes, cancelled), 200, PAGE)
  })

  app.post('/roster', { config: { dashboard: 'operator', csrfInHandler: true } }, async (request, reply) => {
    const { fields, saved, fileName } = await readUploadForm(request, uploads)
    const tier = (TIER_IDS as readonly string[]).includes(fields.tier ?? '') ? (fields.tier as TierId) : TIER_IDS[0]
    if (saved === undefined || !saved.ok) {
      const error =
        saved === undefined
          ? 'Choose the export to upload: a .zip file.'
          : 'The file is larger than this service accepts.'
      const body = uploadBody(request, uploads.maxBytes, false, error)
      return sendPage(request, reply, 'Import a roster', body, saved === undefined ? 400 : 413, PAGE)
    }
    const source = uploads.fileOf(saved.token)!
    const options = { now: clock.now(), tier, ...(pause === undefined ? {} : { pause }) }
    const result = await previewImport(rosterImport({ source, open, options }))
    const preview = result.checked
    const problems = result.kind === 'refused' ? result.problems : []
    const more = result.kind === 'refused' ? result.more : 0
    const counts = preview === undefined ? {} : { students: preview.students }
    await audit(request, 'roster.upload', saved.token, {
      bytes: saved.bytes,
      problems: problems.length + more,
      ...counts,
    })
    if (preview === undefined || problems.length > 0) {
      uploads.remove(saved.token)
      return sendPage(request, reply, 'The roster has problems', problemsBody(problems, more), 400, PAGE)
    }
    const state: UploadState = { accountId: request.account!.id, fileName, tier, preview }
    uploads.writeState(saved.token, 'pending', state)
    return reply.redirect(`${PAGE}/${saved.token}`, 303)
  })

  app.get('/roster/:token', operator, async (request, reply) => {
    const token = tokenOf(request)
    const done = own(request, uploads.readState<UploadState>(token, 'done'))
    if (done?.outcome !== undefined)
      return sendPage(request, reply, 'Roster imported', outcomeBody(done.outcome), 200, PAGE)
    const pending = own(request, uploads.readState<UploadState>(token, 'pending'))
    if (pending === undefined) throw gone()
    const body = previewBody(request, token, pending.fileName, pending.preview)
    return sendPage(request, reply, 'Preview of the roster import', body, 200, PAGE)
  })

  /** Claims the pending upload of the request's token, if this operator uploaded it: once only. */
  function claim(request: FastifyRequest): { token: string; upload: UploadState } {
    const token = tokenOf(request)
    if (own(request, uploads.readState<UploadState>(token, 'pending')) === undefined) throw gone()
    const upload = uploads.claim<UploadState>(token)
    if (upload === undefined) throw gone()
    return { token, upload }
  }

  app.post('/roster/:token/confirm', operator, async (request, reply) => {
    const { token, upload } = claim(request)
    try {
      const written = await writeImport(
        rosterImport({
          source: uploads.fileOf(token)!,
          open,
          options: {
            now: clock.now(),
            tier: upload.tier,
            confirmErase: text(request.body as FormBody, 'erase') === 'yes',
            ...(pause === undefined ? {} : { pause }),
          },
          record: (trx, detail) => audit(request, 'roster.import', token, detail, trx),
        }),
      )
      if (!written.ok) {
        const body = problemsBody(written.problems, written.more)
        return sendPage(request, reply, 'The roster has problems', body, 400, PAGE)
      }
      const { outcome } = written.outcome
      uploads.writeState(token, 'done', { ...upload, outcome })
      return reply.redirect(`${PAGE}/${token}`, 303)
    } catch (error) {
      if (error instanceof RosterImportRefused) {
        const body = problemsBody(error.problems, error.moreProblems)
        return sendPage(request, reply, 'The roster has problems', body, 409, PAGE)
      }
      if (error instanceof ErasureNotConfirmed)
        throw new DashboardError(409, 'The import now erases students', `${error.message}. Upload the export again.`)
      throw error
    } finally {
      uploads.remove(token)
    }
  })

  app.post('/roster/:token/cancel', operator, async (request, reply) => {
    const { token } = claim(request)
    uploads.remove(token)
    await audit(request, 'roster.cancel', token, {})
    return reply.redirect(`${PAGE}?cancelled=1`, 303)
  })
}
