/**
 * The lesson player (docs/lti.md#the-lesson-player): `GET /lti/lesson?s=` opens the launched
 * lesson at its first slide, and its forms `POST /lti/lesson` with the sealed session in `s`, the
 * slide shown and the learner's action. Slides are rendered here from the stored catalog; a quiz
 * answer is checked here. A learner's steps are recorded through cases/lti-progress.ts.
 *
 * A launch lives in a platform's iframe on another site, so nothing here uses a cookie: the
 * session travels in the URL of the first page and in a hidden field of every form after it.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify'
import { Type } from 'typebox'
import type { Slide } from '../catalog/slides.js'
import { recordLessonStep, recordsProgress } from '../cases/lti-progress.js'
import { sharedSecret } from '../cases/shared-settings.js'
import type { Clock } from '../clock.js'
import type { LessonStep } from '../domain/lesson-steps.js'
import { openPlayerSession, type PlayerSession, playerKey } from '../domain/lti-player-session.js'
import type { ProgressEntry } from '../domain/progress.js'
import { lessonBySlug } from '../storage/catalog-repository.js'
import { isStorageUnavailable, type Storage } from '../storage/connection.js'
import { registrationById } from '../storage/lti-registration-repository.js'
import { PLAYER_CSS, PLAYER_CSS_ROUTE } from './player-assets.js'
import { playerCsp, playerHeaders } from './player-headers.js'
import { finishedPage, type LessonView, messagePage, slidePage } from './views/player-page.js'
import type { QuizState } from './views/slide-views.js'

export interface LessonPlayerDeps {
  storage: Storage
  clock: Clock
  /** Local development and tests: loopback origins may frame the player too. */
  allowLoopback: boolean
}

/** The setting the player's sealing key is derived from, shared by every instance. */
export const PLAYER_KEY_SETTING = 'lti-player-key'

const SessionToken = Type.String({ minLength: 1, maxLength: 4096 })
const ACTIONS = ['previous', 'next', 'answer', 'finish', 'review'] as const
type Action = (typeof ACTIONS)[number]

const LessonQuery = Type.Object({ s: SessionToken }, { additionalProperties: false })
const LessonForm = Type.Object(
  {
    s: SessionToken,
    slide: Type.String({ pattern: '^[0-9]{1,3}$' }),
    action: Type.Union(ACTIONS.map((action) => Type.Literal(action))),
    answer: Type.Optional(Type.String({ pattern: '^[0-9]$' })),
  },
  { additionalProperties: false },
)

/** A page instead of the lesson, with its status. */
class PlayerRefusal extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(title)
  }
}

const OPEN_AGAIN = 'Open the lesson again from your course.'

export async function lessonPlayer(parent: FastifyInstance, deps: LessonPlayerDeps): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>()
  const key = playerKey(await sharedSecret(deps.storage.db, PLAYER_KEY_SETTING))
  const csp = playerCsp(deps.allowLoopback)
  const { db, writes } = deps.storage

  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 16_384 },
    (_request, body, done) => {
      const form: Record<string, string | string[]> = {}
      for (const [name, value] of new URLSearchParams(body as string)) {
        const existing = form[name]
        form[name] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value]
      }
      done(null, form)
    },
  )

  const send = (reply: FastifyReply, status: number, body: string) => playerHeaders(reply, csp).code(status).send(body)

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof PlayerRefusal) {
      for (const [name, value] of Object.entries(error.headers)) reply.header(name, value)
      return send(reply, error.status, messagePage(error.title, error.detail))
    }
    const status = error.statusCode ?? 500
    if (status >= 400 && status < 500)
      return send(reply, status, messagePage('This page of the lesson cannot be shown', OPEN_AGAIN))
    if (isStorageUnavailable(error)) {
      request.log.warn({ err: error }, 'lesson player: storage unavailable')
      reply.header('retry-after', '5')
      return send(reply, 503, messagePage('The lesson is not available just now', 'Try again in a moment.'))
    }
    request.log.error({ err: error }, 'lesson player failed')
    return send(
      reply,
      500,
      messagePage(
        'Something went wrong on our side',
        `Try again in a moment. If it keeps happening, tell your teacher.`,
      ),
    )
  })

  /** The session sealed in `s`, with its lesson, or the page that says why not. */
  async function openLesson(token: string) {
    const now = deps.clock.now()
    const session = openPlayerSession(key, token, now)
    if (session === undefined) {
      // Opening it as if no time had passed tells an ended session of ours from one that is not.
      const ended = openPlayerSession(key, token, Number.NEGATIVE_INFINITY)
      if (ended !== undefined)
        throw new PlayerRefusal(
          401,
          'This lesson was opened too long ago',
          recordsProgress(ended) ? `${OPEN_AGAIN} Your work so far is saved.` : OPEN_AGAIN,
          { 'www-authenticate': 'Bearer realm="lti-lesson", error="invalid_token", error_description="session ended"' },
        )
      throw new PlayerRefusal(400, 'This lesson link is not valid', OPEN_AGAIN)
    }
    const registration = await registrationById(db, session.registrationId)
    if (registration?.status !== 'active')
      throw new PlayerRefusal(
        403,
        'This lesson is not available from your course',
        'Your school has switched this connection off. Ask your teacher.',
      )
    const row = await lessonBySlug(db, session.lessonSlug)
    if (row === undefined)
      throw new PlayerRefusal(404, 'This lesson is no longer in the catalogue', 'Ask your teacher for another one.')
    const slides = JSON.parse(row.slides) as Slide[]
    const view: LessonView = { token, title: row.title, slides, recording: recordsProgress(session) }
    return { session, view, now }
  }

  /** Records the step when the session's work is recorded; the entry as it now is, or undefined. */
  function record(session: PlayerSession, step: LessonStep, now: number): Promise<ProgressEntry | undefined> {
    if (!recordsProgress(session)) return Promise.resolve(undefined)
    return recordLessonStep(writes, { studentId: session.studentId!, lessonSlug: session.lessonSlug }, step, now)
  }

  app.get(PLAYER_CSS_ROUTE, { schema: { hide: true } }, async (_request, reply) =>
    reply
      .header('cache-control', 'public, max-age=31536000, immutable')
      .type('text/css; charset=utf-8')
      .send(PLAYER_CSS),
  )

  app.get('/lesson', { schema: { hide: true, querystring: LessonQuery } }, async (request, reply) => {
    const { session, view, now } = await openLesson(request.query.s)
    await record(session, { kind: 'open' }, now)
    return send(reply, 200, slidePage(view, 0))
  })

  app.post('/lesson', { schema: { hide: true, body: LessonForm } }, async (request, reply) => {
    const { session, view, now } = await openLesson(request.body.s)
    const index = Number(request.body.slide)
    const action: Action = request.body.action
    const last = view.slides.length - 1
    const slide = view.slides[index]
    const impossible = () => new PlayerRefusal(400, 'This step of the lesson is not possible', OPEN_AGAIN)
    if (slide === undefined) throw impossible()
    switch (action) {
      case 'previous':
        if (index === 0) throw impossible()
        await record(session, { kind: 'view' }, now)
        return send(reply, 200, slidePage(view, index - 1))
      case 'review':
        await record(session, { kind: 'view' }, now)
        return send(reply, 200, slidePage(view, 0))
      case 'next':
        if (index === last) throw impossible()
        await record(session, { kind: 'leave', slide: index }, now)
        return send(reply, 200, slidePage(view, index + 1))
      case 'finish': {
        if (index !== last) throw impossible()
        const entry = await record(session, { kind: 'finish', slideCount: view.slides.length }, now)
        return send(reply, 200, finishedPage(view, entry?.xp))
      }
      case 'answer': {
        if (slide.type !== 'quiz') throw impossible()
        if (request.body.answer === undefined) return send(reply, 400, slidePage(view, index, { missing: true }))
        const choice = Number(request.body.answer)
        if (choice >= slide.choices.length) throw impossible()
        const quiz: QuizState = { answered: { choice, right: choice === slide.answer } }
        await record(session, { kind: 'answer', slide: index, right: choice === slide.answer }, now)
        return send(reply, 200, slidePage(view, index, quiz))
      }
    }
  })
}
