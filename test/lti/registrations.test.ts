/**
 * Registrations and the students launches make, on both engines: pending until activated, one
 * per (issuer, client id), audited; one student per (registration, sub), linked to the
 * registration's organisation, first name only.
 */
import { afterEach, describe, expect, it } from 'vitest'
import {
  activateRegistration,
  createRegistrationLink,
  deactivateRegistration,
  RegistrationExistsError,
  registrationLinkInForce,
  revokeLink,
} from '../../src/cases/lti-registrations.js'
import { studentForLaunch } from '../../src/cases/lti-students.js'
import { placeholderName } from '../../src/domain/lti-first-name.js'
import { listAudit } from '../../src/storage/audit-repository.js'
import { registrationById } from '../../src/storage/lti-registration-repository.js'
import { createTestStorage, START } from '../helper.js'
import { ManualClock } from '../../src/clock.js'
import type { Storage } from '../../src/storage/connection.js'
import { createOrganisation } from '../../src/storage/access-repository.js'
import { TestPlatform } from '../support/lti-platform.js'
import { OPERATOR, registerPlatform } from '../support/lti.js'

describe('LTI registrations and their students', () => {
  let storage: Storage
  let platform: TestPlatform | undefined
  const clock = new ManualClock(START)
  afterEach(async () => {
    await platform?.stop()
    await storage?.close()
  })

  async function setUp() {
    storage = await createTestStorage()
    platform = await new TestPlatform().start()
    const organisation = await createOrganisation(storage.db, 'District Learning', clock.now())
    return organisation
  }

  it('keeps a registration pending until activated, refuses a second of the same client id, audits each step', async () => {
    const organisation = await setUp()
    const pending = await registerPlatform(storage, clock, platform!, {
      organisationId: organisation.id,
      toolBase: 'http://tool.test',
      activate: false,
    })
    expect(pending.status).toBe('pending')
    expect(pending.share_id).toBeNull()
    await expect(
      registerPlatform(storage, clock, platform!, { organisationId: organisation.id, toolBase: 'http://tool.test' }),
    ).rejects.toBeInstanceOf(RegistrationExistsError)

    const activations = await Promise.allSettled([
      activateRegistration(storage.db, pending.id, OPERATOR, clock),
      activateRegistration(storage.db, pending.id, OPERATOR, clock),
    ])
    expect(activations.filter((a) => a.status === 'fulfilled')).toHaveLength(1)
    const active = (await registrationById(storage.db, pending.id))!
    expect(active.status).toBe('active')
    expect(active.share_id).not.toBeNull()
    await deactivateRegistration(storage.db, pending.id, OPERATOR, clock)
    // Activated again, it keeps its share: its students stay in one list.
    const again = await activateRegistration(storage.db, pending.id, OPERATOR, clock)
    expect(again.share_id).toBe(active.share_id)
    const actions = (await listAudit(storage.db)).map((row) => row.action).reverse()
    expect(actions).toEqual(['lti.register', 'lti.activate', 'lti.deactivate', 'lti.activate'])
  })

  it('makes one student per (registration, sub) under racing first launches, first name only, linked to the organisation', async () => {
    const organisation = await setUp()
    const registration = await registerPlatform(storage, clock, platform!, {
      organisationId: organisation.id,
      toolBase: 'http://tool.test',
    })
    const launches = await Promise.all(
      Array.from({ length: 6 }, () =>
        studentForLaunch(
          storage.db,
          registration,
          { sub: 'sub-1', givenName: 'Ada Lovelace', tier: 'builder' },
          clock.now(),
        ),
      ),
    )
    expect(new Set(launches.map((l) => l.studentId)).size).toBe(1)
    expect(launches.filter((l) => l.created)).toHaveLength(1)
    const id = launches[0]!.studentId
    const student = await storage.db.selectFrom('students').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
    expect(student).toMatchObject({ first_name: 'Ada', tier: 'builder', source: 'lti', sandbox: 0 })
    const link = await storage.db.selectFrom('student_organisations').selectAll().where('student_id', '=', id).execute()
    expect(link.map((row) => row.organisation_id)).toEqual([organisation.id])

    const nameless = await studentForLaunch(
      storage.db,
      registration,
      { sub: 'sub-2', givenName: undefined, tier: 'explorer' },
      clock.now(),
    )
    const row = await storage.db
      .selectFrom('students')
      .select('first_name')
      .where('id', '=', nameless.studentId)
      .executeTakeFirstOrThrow()
    expect(row.first_name).toBe(placeholderName('sub-2'))
    expect(row.first_name).toMatch(/^Student-[A-Z][a-z]{3}$/)
  })

  it('gives a registration URL whose token works until revoked, and only its hash is stored', async () => {
    const organisation = await setUp()
    const link = await createRegistrationLink(
      storage.db,
      { organisationId: organisation.id, schoolId: null },
      OPERATOR,
      clock,
    )
    expect(link.token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(JSON.stringify(await storage.db.selectFrom('lti_registration_links').selectAll().execute())).not.toContain(
      link.token,
    )
    expect((await registrationLinkInForce(storage.db, link.token))?.id).toBe(link.row.id)
    // Another last character: the token with one character changed is no token in force.
    const altered = `${link.token.slice(0, -1)}${link.token.endsWith('A') ? 'B' : 'A'}`
    expect(await registrationLinkInForce(storage.db, altered)).toBeUndefined()
    expect(await registrationLinkInForce(storage.db, '../../etc')).toBeUndefined()
    await revokeLink(storage.db, link.row.id, OPERATOR, clock)
    expect(await registrationLinkInForce(storage.db, link.token)).toBeUndefined()
  })
})
