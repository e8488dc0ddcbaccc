/**
 * Launches end to end over real sockets, on both engines: the login, the platform's authorization
 * answering with its auto-posting form, and the launch answering 303 to the lesson with a sealed
 * player session. A learner's launch makes their student (first name only, the lesson's tier,
 * the registration's organisation) and records the resource link; a teacher's or an anonymous
 * launch previews and records nothing. The platform's keys are fetched once, again on an unknown
 * kid, and not more than once per ten seconds.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { SESSION_MS } from '../../src/domain/lti-player-session.js'
import { CLAIM, ROLE } from '../../src/domain/lti-claims.js'
import { placeholderName } from '../../src/domain/lti-first-name.js'
import { REFETCH_MS } from '../../src/services/lti-platform-keys.js'
import { lessonHeading } from '../../src/storage/catalog-repository.js'
import type { LtiRegistrationRow } from '../../src/storage/tables.js'
import { type TestContext, buildTestApp } from '../helper.js'
import { formOf, TestPlatform } from '../support/lti-platform.js'
import { playerForm } from '../support/lti-player.js'
import {
  expectPageHeaders,
  expectRefusal,
  launchThroughPlatform,
  launchWithToken,
  LTI_ENV,
  login,
  playerSessionOf,
  postLaunch,
  registeredPlatform,
} from '../support/lti-launch.js'

const LESSON = 'builder/b2-loops-save-time'
const OTHER_LESSON = 'explorer/e3-patterns-all-around'
const withLesson = (slug: string) => ({ [CLAIM.custom]: { lesson: slug } })

describe('LTI launches', () => {
  let t: TestContext
  let platform: TestPlatform | undefined
  let registration: LtiRegistrationRow
  afterEach(async () => {
    await platform?.stop()
    platform = undefined
    await t?.close()
  })

  async function setUp() {
    t = await buildTestApp({ env: LTI_ENV })
    platform = await new TestPlatform().start()
    registration = await registeredPlatform(t, platform, t.fixtures.orgs.acme)
  }

  const rows = async () => ({
    students: await t.storage.db.selectFrom('lti_students').selectAll().execute(),
    links: await t.storage.db.selectFrom('lti_resource_links').selectAll().execute(),
  })

  it('takes a learner from the login through the platform to the lesson, making their student and recording the link', async () => {
    await setUp()
    const response = await launchThroughPlatform(t, platform!, {
      ...withLesson(LESSON),
      given_name: 'Ada Lovelace',
    })
    expectPageHeaders(response)
    const session = await playerSessionOf(t, response)
    expect(session).toMatchObject({
      registrationId: registration.id,
      resourceLinkId: 'resource-link-1',
      lessonSlug: LESSON,
      roles: ['learner'],
      expiresAt: t.clock.now() + SESSION_MS,
    })
    expect(platform!.logins[0]).toMatchObject({
      login_hint: 'opaque-user-hint',
      lti_message_hint: 'opaque-message-hint',
      prompt: 'none',
    })
    const student = await t.storage.db
      .selectFrom('students')
      .selectAll()
      .where('id', '=', session.studentId!)
      .executeTakeFirstOrThrow()
    expect(student).toMatchObject({ first_name: 'Ada', tier: 'builder', source: 'lti' })
    const organisations = await t.storage.db
      .selectFrom('student_organisations')
      .select('organisation_id')
      .where('student_id', '=', session.studentId!)
      .execute()
    expect(organisations.map((row) => row.organisation_id)).toEqual([t.fixtures.orgs.acme])
    const { students, links } = await rows()
    expect(students).toMatchObject([
      { registration_id: registration.id, sub: 'learner-1', student_id: session.studentId },
    ])
    expect(links).toEqual([
      expect.objectContaining({
        registration_id: registration.id,
        resource_link_id: 'resource-link-1',
        deployment_id: platform!.deploymentId,
        context_id: 'course-1',
        lesson_slug: LESSON,
        line_item_url: `${platform!.origin}/contexts/course-1/lineitems/1`,
        line_items_url: `${platform!.origin}/contexts/course-1/lineitems`,
      }),
    ])

    // Launched again without custom.lesson, the link opens the lesson it recorded, for the same student.
    const again = await playerSessionOf(
      t,
      await launchThroughPlatform(t, platform!, { [CLAIM.ags]: undefined }, { client_id: undefined }),
    )
    expect(again).toMatchObject({ studentId: session.studentId, lessonSlug: LESSON })
    // The line item URLs stay when a launch does not carry them.
    expect((await rows()).links[0]).toMatchObject({
      line_item_url: `${platform!.origin}/contexts/course-1/lineitems/1`,
    })
    // custom.lesson names the lesson when it is one of the catalog's, whatever was recorded.
    const moved = await playerSessionOf(t, await launchThroughPlatform(t, platform!, withLesson(OTHER_LESSON)))
    expect(moved.lessonSlug).toBe(OTHER_LESSON)
    expect((await rows()).links[0]!.lesson_slug).toBe(OTHER_LESSON)
    const unknown = await launchThroughPlatform(t, platform!, withLesson('builder/b99-no-such-lesson'))
    expect((await playerSessionOf(t, unknown)).lessonSlug).toBe(OTHER_LESSON)
    // One key set fetch served every launch.
    expect(platform!.jwksFetches).toBe(1)
  })

  it('from the platform’s launch to its gradebook: the lesson worked to the end sends a completed score for the launch’s sub', async () => {
    await setUp()
    const response = await launchThroughPlatform(t, platform!, withLesson(LESSON))
    const session = await playerSessionOf(t, response)
    let page = (await t.send({ url: String(response.headers.location) })).body
    const { slideCount } = (await lessonHeading(t.storage.db, LESSON))!
    for (let slide = 0; slide < slideCount; slide++) {
      t.clock.advance(30_000)
      const { fields } = formOf(page.slice(page.lastIndexOf('<form')))
      const step = await t.send(playerForm({ ...fields, action: slide === slideCount - 1 ? 'finish' : 'next' }))
      expect(step.statusCode, step.body.slice(0, 400)).toBe(200)
      page = step.body
    }
    const entry = await t.storage.db
      .selectFrom('progress')
      .selectAll()
      .where('student_id', '=', session.studentId!)
      .executeTakeFirstOrThrow()
    expect(entry).toMatchObject({ lesson_slug: LESSON, status: 'completed' })
    await t.app.services.ltiScores.run()
    const last = platform!.scores.at(-1)!
    expect(last.lineItem).toBe(`${platform!.origin}/contexts/course-1/lineitems/1`)
    expect(last.body).toMatchObject({
      userId: 'learner-1',
      scoreMaximum: 100,
      activityProgress: 'Completed',
      gradingProgress: 'FullyGraded',
    })
  })

  it('says a link has no lesson when neither the link nor the tool knows one', async () => {
    await setUp()
    expectRefusal(await launchThroughPlatform(t, platform!, {}), 404, 'no_lesson')
    expectRefusal(await launchThroughPlatform(t, platform!, withLesson('builder/b99-no-such-lesson')), 404, 'no_lesson')
    expect(await rows()).toEqual({ students: [], links: [] })
  })

  it('lets teachers and anonymous users preview: the same 303, no student, nothing recorded', async () => {
    await setUp()
    for (const roles of [[ROLE.instructor], [ROLE.learner, ROLE.teachingAssistant], [ROLE.institutionAdministrator]]) {
      const session = await playerSessionOf(
        t,
        await launchThroughPlatform(t, platform!, { ...withLesson(LESSON), [CLAIM.roles]: roles }),
      )
      expect(session.studentId).toBeNull()
      expect(session.roles.some((role) => role === 'instructor' || role === 'administrator')).toBe(true)
    }
    const instructor = await playerSessionOf(
      t,
      await launchThroughPlatform(t, platform!, { ...withLesson(LESSON), [CLAIM.roles]: [ROLE.instructor] }),
    )
    expect(instructor.roles).toEqual(['instructor'])
    const anonymous = await playerSessionOf(
      t,
      await launchThroughPlatform(t, platform!, { ...withLesson(LESSON), sub: undefined }),
    )
    expect(anonymous).toMatchObject({ studentId: null, roles: ['learner'], lessonSlug: LESSON })
    const guest = await playerSessionOf(
      t,
      await launchThroughPlatform(t, platform!, { ...withLesson(LESSON), [CLAIM.roles]: [] }),
    )
    expect(guest).toMatchObject({ studentId: null, roles: [] })
    expect(await rows()).toEqual({ students: [], links: [] })
  })

  it('names a learner without given_name "Student" and a suffix from their sub, never by `name`', async () => {
    await setUp()
    const session = await playerSessionOf(
      t,
      await launchThroughPlatform(t, platform!, {
        ...withLesson(LESSON),
        sub: 'learner-7',
        given_name: undefined,
        name: 'Grace Hopper',
      }),
    )
    const student = await t.storage.db
      .selectFrom('students')
      .select('first_name')
      .where('id', '=', session.studentId!)
      .executeTakeFirstOrThrow()
    expect(student.first_name).toBe(placeholderName('learner-7'))
  })

  it('fetches the platform’s keys again for an unknown kid, at most once per ten seconds, and takes a rotated key', async () => {
    await setUp()
    const launch = (options: Parameters<TestPlatform['idToken']>[1] = {}) =>
      launchWithToken(t, platform!, withLesson(LESSON), options)
    expect((await launch()).statusCode).toBe(303)
    expect(platform!.jwksFetches).toBe(1)
    // Just fetched: an unknown kid does not fetch again.
    expectRefusal(await launch({ kid: 'rotated' }), 401, 'unknown_kid')
    expect(platform!.jwksFetches).toBe(1)
    t.clock.advance(REFETCH_MS)
    expectRefusal(await launch({ kid: 'rotated' }), 401, 'unknown_kid')
    expect(platform!.jwksFetches).toBe(2)
    expectRefusal(await launch({ kid: 'rotated' }), 401, 'unknown_kid')
    expectRefusal(await launch({ kid: 'made-up' }), 401, 'unknown_kid')
    expect(platform!.jwksFetches).toBe(2)

    // The platform rotates to a new key: once ten seconds have passed, its first launch fetches the set again.
    platform!.additionalKeys.push({ kid: 'rotated', keys: platform!.strangerKeys })
    t.clock.advance(REFETCH_MS)
    expect((await launch({ kid: 'rotated', key: platform!.strangerKeys })).statusCode).toBe(303)
    expect((await launch({ kid: 'rotated', key: platform!.strangerKeys })).statusCode).toBe(303)
    expect((await launch()).statusCode).toBe(303)
    expect(platform!.jwksFetches).toBe(3)
  })

  it('answers 502 when the platform’s keys cannot be fetched', async () => {
    await setUp()
    const started = await login(t, platform!)
    const token = await platform!.idToken(platform!.launchClaims('https://tool.example', withLesson(LESSON)), {
      nonce: started.nonce,
      now: t.clock.now(),
    })
    await platform!.stop()
    platform = undefined
    expectRefusal(await postLaunch(t, token, started.state), 502, 'platform_keys')
  })
})
