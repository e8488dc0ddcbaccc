/**
 * Privacy at the edge, on both engines: launches whose every claim the tool has no use for
 * carries a marker (family, middle and full names, e-mail, picture, lis, custom values, context
 * and link titles, launch presentation, platform details, extension claims) leave the marker in
 * no column of any table (nor, on SQLite, anywhere in the database's files) and in no log line,
 * at the most verbose level; nor does the raw id_token. The first name is kept, under its rule.
 */
import { randomBytes } from 'node:crypto'
import { pino } from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { ManualClock } from '../../src/clock.js'
import { CLAIM, MESSAGE, ROLE } from '../../src/domain/lti-claims.js'
import type { Storage } from '../../src/storage/connection.js'
import { createTestStorage, freshDatabaseUrl, requestPathOptions, seedFixtures, START, testConfig } from '../helper.js'
import { columnsHolding, sqliteFilesHolding } from '../support/database-scan.js'
import { HttpClient } from '../support/http-client.js'
import { formOf, type LaunchClaims, TestPlatform } from '../support/lti-platform.js'
import {
  LTI_ENV,
  type LtiTestApp,
  login,
  pathOf,
  playerSessionOf,
  postForm,
  registeredPlatform,
  TOOL_URL,
} from '../support/lti-launch.js'

const MARKER = `PRIVATE${randomBytes(6).toString('hex')}`
const marked = (what: string) => `${MARKER}-${what}`

/** Every claim a platform may send that the tool must drop, each holding the marker. */
function claimsToDrop(): LaunchClaims {
  return {
    family_name: marked('family'),
    middle_name: marked('middle'),
    name: marked('full name'),
    email: `${MARKER.toLowerCase()}@school.example`,
    picture: `https://pictures.example/${MARKER}.png`,
    locale: marked('locale'),
    [CLAIM.lis]: { person_sourcedid: marked('sourcedid'), course_section_sourcedid: marked('section') },
    [CLAIM.context]: { id: 'course-1', label: marked('label'), title: marked('course title'), type: [] },
    [CLAIM.launchPresentation]: { return_url: `https://platform.example/${MARKER}`, document_target: 'iframe' },
    [CLAIM.toolPlatform]: { guid: marked('guid'), name: marked('platform name'), contact_email: `${MARKER}@x.example` },
    'https://purl.imsglobal.org/spec/lti/claim/role_scope_mentor': [marked('mentee')],
    'https://www.instructure.com/placement': marked('extension'),
  }
}

describe('LTI privacy at the edge', () => {
  let storage: Storage | undefined
  let close: (() => Promise<void>) | undefined
  let platform: TestPlatform | undefined
  afterEach(async () => {
    await close?.()
    await platform?.stop()
    await storage?.close()
  })

  it('keeps no marked claim and no id_token in any table, file or log line, and the first name only', async () => {
    const url = freshDatabaseUrl()
    storage = await createTestStorage({ url })
    const clock = new ManualClock(START)
    const fixtures = await seedFixtures(storage, clock.now())
    const lines: string[] = []
    const logger = pino({ level: 'trace' }, { write: (line: string) => lines.push(line) })
    const app = await buildApp(
      requestPathOptions({ config: testConfig(LTI_ENV), storage, clock, logger, pollChanges: false }),
    )
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const client = new HttpClient(base)
    close = async () => {
      client.close()
      await app.close()
    }
    const t: LtiTestApp = { base, send: (request) => client.request(request), storage, clock }
    platform = await new TestPlatform().start()
    await registeredPlatform(t, platform, fixtures.orgs.acme)
    const tokens: string[] = []

    /** A launch through the platform, keeping the id_token it carried. */
    const launch = async (claims: LaunchClaims) => {
      platform!.nextLaunch = () => platform!.launchClaims(TOOL_URL, { ...claimsToDrop(), ...claims })
      const started = await login(t, platform!)
      const form = formOf(await (await fetch(started.authorize)).text())
      tokens.push(form.fields.id_token!)
      return postForm(t, pathOf(form.action), form.fields)
    }

    const learner = await launch({
      given_name: 'Ada',
      [CLAIM.custom]: { lesson: 'builder/b2-loops-save-time', secret: marked('custom'), canvas_user: marked('id') },
      [CLAIM.resourceLink]: { id: 'resource-link-1', title: marked('link title'), description: marked('about') },
      [CLAIM.roles]: [ROLE.learner, `http://purl.imsglobal.org/vocab/lis/v2/membership#${MARKER}`],
    })
    const session = await playerSessionOf(t, learner)
    expect(session.studentId).not.toBeNull()
    expect(JSON.stringify(session)).not.toContain(MARKER)
    const student = await storage.db
      .selectFrom('students')
      .select('first_name')
      .where('id', '=', session.studentId!)
      .executeTakeFirstOrThrow()
    expect(student.first_name).toBe('Ada')

    expect(
      (await launch({ sub: undefined, [CLAIM.custom]: { lesson: 'builder/b2-loops-save-time', x: marked('c') } }))
        .statusCode,
    ).toBe(303)
    // A refused launch logs no more than an accepted one.
    expect((await launch({ [CLAIM.deploymentId]: marked('deployment') })).statusCode).toBe(403)
    const picker = await launch({
      [CLAIM.messageType]: MESSAGE.deepLinkingRequest,
      [CLAIM.roles]: [ROLE.instructor],
      [CLAIM.resourceLink]: undefined,
      [CLAIM.deepLinkingSettings]: {
        deep_link_return_url: `${platform.origin}/deep-link-return`,
        accept_types: ['ltiResourceLink'],
        accept_multiple: false,
        title: marked('dl title'),
        text: marked('dl text'),
      },
    })
    expect(picker.statusCode).toBe(200)
    const { dl } = formOf(picker.body).fields
    const answered = await postForm(t, '/lti/deep-link', { dl: dl!, lesson: 'explorer/e3-patterns-all-around' })
    expect(answered.statusCode).toBe(200)

    expect(tokens).toHaveLength(4)
    const log = lines.join('')
    expect(log).toContain('LTI launch verified')
    expect(log).toContain('"path":"/lti/launch"')
    expect(log).toContain('"lti":"unknown_deployment"')
    expect(log).not.toContain(MARKER)
    expect(log.toLowerCase()).not.toContain(MARKER.toLowerCase())
    for (const token of tokens) {
      expect(log).not.toContain(token.split('.')[1])
      expect(log).not.toContain(token.split('.')[2])
    }
    expect(await columnsHolding(storage, MARKER)).toEqual([])
    expect(await columnsHolding(storage, MARKER.toLowerCase())).toEqual([])
    for (const token of tokens) expect(await columnsHolding(storage, token.split('.')[2]!)).toEqual([])
    if (storage.engine === 'sqlite') expect(sqliteFilesHolding(url, MARKER)).toEqual([])
    // The scan finds what is there: the kept first name and the link id.
    expect(await columnsHolding(storage, 'resource-link-1')).toContain('lti_resource_links.resource_link_id')
  })
})
