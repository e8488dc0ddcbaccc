/**
 * Importing a district's roster from the dashboard: upload the OneRoster export (a .zip; a file
 * upload without JavaScript is a multipart form), see the preview (counts and every problem),
 * then confirm or cancel. The upload waits in a private file (services/roster-uploads.ts) that
 * the import or the cancel removes; the upload, the import and the cancel are audit rows.
 *
 * The preview and the import run in this process and yield to the event loop between batches of
 * students, so requests keep being answered meanwhile; on SQLite the import commits batch by
 * batch, on PostgreSQL in one transaction (roster/roster-import.ts says why).
 */
import multipart from '@fastify/multipart'
import { TIER_IDS, type TierId } from '../../../../domain/tiers.js'
import { readOneRoster } from '../../../../roster/oneroster.js'
import {
  applyRosterImport,
  planRosterImport,
  ErasureNotConfirmed,
  RosterImportRefused,
  type RosterOutcome,
  type RosterPreview,
} from '../../../../roster/roster-import.js'
import { RosterUploads } from '../../../../services/roster-uploads.js'
import { recordAudit } from '../../../../storage/audit-repository.js'
import { verifyCsrf } from '../../../csrf.js'
import type { PagePlugin } from '../../../dashboard-context.js'
import { DashboardError } from '../../../dashboard-error.js'
import { type FormBody, text } from '../../../forms.js'
import { sendPage } from '../../../send-page.js'
import { auditActor } from '../audit-actor.js'
import { outcomeBody, previewBody, problemsBody, uploadBody } from './views.js'

const operator = { config: { dashboard: 'operator' as const } }
const PAGE = '/dashboard/operator/roster'
/** An upload not imported or cancelled within this time is removed. */
const UPLOAD_LIFETIME_MS = 60 * 60_000
const SWEEP_EVERY_MS = 5 * 60_000

interface Pending {
  accountId: string
  fileName: string
  tier: TierId
  preview: RosterPreview
  at: number
  /** Once imported: what it changed, for the result page. */
  outcome?: RosterOutcome
}

export const rosterPages: PagePlugin = async (app, { context }) => {
  const { storage, clock } = context
  const settings = context.rosterUploads ?? { dir: 'data/roster-uploads', maxBytes: 256 * 1024 * 1024 }
  const uploads = new RosterUploads(settings.dir, settings.maxBytes)
  const pending = new Map<string, Pending>()
  const sweep = () => {
    const now = Date.now()
    uploads.sweep(now, UPLOAD_LIFETIME_MS)
    for (const [token, upload] of pending) if (now - upload.at > UPLOAD_LIFETIME_MS) pending.delete(token)
  }
  sweep()
  const timer = setInterval(sweep, SWEEP_EVERY_MS).unref()
  app.addHook('onClose', async () => clearInterval(timer))
  // A turn of the event loop between batches of the preview: on SQLite every statement runs on this thread.
  const pause = storage.engine === 'sqlite' ? () => new Promise<void>((resolve) => setImmediate(resolve)) : undefined

  await app.register(multipart, {
    limits: { fileSize: uploads.maxBytes, files: 1, fields: 3, parts: 4, fieldSize: 1024, headerPairs: 50 },
    // A file over the limit is cut, then removed with a page of its own (below), rather than thrown.
    throwFileSizeLimit: false,
  })

  app.get('/roster', operator, async (request, reply) => {
    const query = request.query as Record<string, unknown>
    return sendPage(
      request,
      reply,
      'Import a roster',
      uploadBody(request, uploads.maxBytes, query.cancelled === '1'),
      200,
      PAGE,
    )
  })

  app.post('/roster', { config: { dashboard: 'operator', csrfInHandler: true } }, async (request, reply) => {
    if (!request.isMultipart())
      throw new DashboardError(400, 'The form could not be read', 'Send the form from its page in the dashboard.')
    const fields: Record<string, string> = {}
    let saved: Awaited<ReturnType<RosterUploads['save']>> | undefined
    let fileName = ''
    try {
      for await (const part of request.parts()) {
        if (part.type === 'field') {
          fields[part.fieldname] = String(part.value)
          // The token comes first in the form: nothing is written before it is checked.
          if (part.fieldname === '_csrf') verifyCsrf(request, request.csrfToken, fields._csrf)
          continue
        }
        if (fields._csrf === undefined) verifyCsrf(request, request.csrfToken, undefined)
        fileName = part.filename
        saved = await uploads.save(part.file, () => part.file.truncated)
      }
    } catch (error) {
      // A form cut short or over a limit: the file written so far goes too.
      if (saved?.ok === true) uploads.remove(saved.token)
      throw error
    }
    if (fields._csrf === undefined) verifyCsrf(request, request.csrfToken, undefined)
    const tier = (TIER_IDS as readonly string[]).includes(fields.tier ?? '') ? (fields.tier as TierId) : TIER_IDS[0]
    if (saved === undefined || !saved.ok) {
      const status = saved === undefined ? 400 : 413
      const body = uploadBody(
        request,
        uploads.maxBytes,
        false,
        saved === undefined
          ? 'Choose the export to upload: a .zip file.'
          : 'The file is larger than this service accepts.',
      )
      return sendPage(request, reply, 'Import a roster', body, status, PAGE)
    }
    const now = clock.now()
    const file = uploads.fileOf(saved.token)!
    const roster = await readOneRoster(file)
    const preview = roster.ok
      ? await planRosterImport(storage.db, roster, { now, tier, ...(pause === undefined ? {} : { pause }) })
      : undefined
    const problems = roster.ok ? preview!.problems : roster.problems
    const more = roster.ok ? preview!.moreProblems : roster.moreProblems
    await recordAudit(
      storage.db,
      {
        actor: auditActor(request),
        action: 'roster.upload',
        target: `roster:${saved.token.slice(0, 8)}`,
        detail: {
          bytes: saved.bytes,
          problems: problems.length + more,
          ...(preview === undefined ? {} : { students: preview.students }),
        },
      },
      now,
    )
    if (preview === undefined || problems.length > 0) {
      uploads.remove(saved.token)
      return sendPage(request, reply, 'The roster has problems', problemsBody(problems, more), 400, PAGE)
    }
    pending.set(saved.token, { accountId: request.account!.id, fileName, tier, preview, at: Date.now() })
    return reply.redirect(`${PAGE}/${saved.token}`, 303)
  })

  app.get('/roster/:token', operator, async (request, reply) => {
    const token = String((request.params as { token?: unknown }).token ?? '')
    const upload = pending.get(token)
    if (upload === undefined || upload.accountId !== request.account!.id) throw gone()
    if (upload.outcome !== undefined)
      return sendPage(request, reply, 'Roster imported', outcomeBody(upload.outcome), 200, PAGE)
    const body = previewBody(request, token, upload.fileName, upload.preview)
    return sendPage(request, reply, 'Preview of the roster import', body, 200, PAGE)
  })

  const gone = () =>
    new DashboardError(404, 'This upload is gone', 'It was imported, cancelled or too old. Upload the export again.')

  /** The pending upload of `token`, uploaded by this operator. */
  function pendingOf(request: { params: unknown; account: { id: string } | null }): { token: string; upload: Pending } {
    const token = String((request.params as { token?: unknown }).token ?? '')
    const upload = pending.get(token)
    if (upload === undefined || upload.accountId !== request.account!.id || upload.outcome !== undefined) throw gone()
    return { token, upload }
  }

  app.post('/roster/:token/confirm', operator, async (request, reply) => {
    const { token, upload } = pendingOf(request)
    // One confirm only: a second click, or a second tab, finds the upload gone.
    pending.delete(token)
    const now = clock.now()
    try {
      const roster = await readOneRoster(uploads.fileOf(token)!)
      if (!roster.ok)
        return sendPage(
          request,
          reply,
          'The roster has problems',
          problemsBody(roster.problems, roster.moreProblems),
          400,
          PAGE,
        )
      const outcome = await applyRosterImport(
        storage.db,
        roster,
        {
          now,
          tier: upload.tier,
          confirmErase: text(request.body as FormBody, 'erase') === 'yes',
          commit: storage.engine === 'sqlite' ? 'batches' : 'one-transaction',
          ...(pause === undefined ? {} : { pause }),
        },
        (trx, result) =>
          recordAudit(
            trx,
            {
              actor: auditActor(request),
              action: 'roster.import',
              target: `roster:${token.slice(0, 8)}`,
              detail: { version: upload.preview.version, kind: upload.preview.kind, tier: upload.tier, ...result },
            },
            now,
          ),
      )
      if (outcome.erased.length > 0) await storage.truncateLog()
      pending.set(token, { ...upload, outcome, at: Date.now() })
      return reply.redirect(`${PAGE}/${token}`, 303)
    } catch (error) {
      if (error instanceof RosterImportRefused)
        return sendPage(
          request,
          reply,
          'The roster has problems',
          problemsBody(error.problems, error.moreProblems),
          409,
          PAGE,
        )
      if (error instanceof ErasureNotConfirmed)
        throw new DashboardError(409, 'The import now erases students', `${error.message}. Upload the export again.`)
      throw error
    } finally {
      uploads.remove(token)
    }
  })

  app.post('/roster/:token/cancel', operator, async (request, reply) => {
    const { token } = pendingOf(request)
    pending.delete(token)
    uploads.remove(token)
    await recordAudit(
      storage.db,
      { actor: auditActor(request), action: 'roster.cancel', target: `roster:${token.slice(0, 8)}` },
      clock.now(),
    )
    return reply.redirect(`${PAGE}?cancelled=1`, 303)
  })
}
