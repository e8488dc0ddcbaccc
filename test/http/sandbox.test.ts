/**
 * Test keys reach only a sandbox's synthetic students (no agreement needed); live keys never
 * reach a sandbox student.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { createApiKey } from '../../src/storage/access-repository.js'
import { createSandbox } from '../../src/cases/sandbox.js'
import { sandboxStudents } from '../../src/storage/sandbox-repository.js'
import { bearer, buildTestApp, linkPastTheGuard, STUDENTS } from '../helper.js'
import { perSuite } from '../support/built.js'

describe('sandbox', () => {
  const t = perSuite(() => buildTestApp({ env: { RATE_LIMIT: '100000', ORGANISATION_RATE_LIMIT: '100000' } }))
  let testKey: string
  let liveKeyOfSandbox: string
  let sandboxStudent: string
  beforeAll(async () => {
    const sandbox = await createSandbox(t.storage.db, 'partner@example.org', t.clock.now())
    sandboxStudent = (await sandboxStudents(t.storage.db, sandbox.id))[0]!.id
    const both = ['students:read', 'students:write'] as const
    testKey = (
      await createApiKey(
        t.storage.db,
        { organisationId: sandbox.id, name: 'test', scopes: both, expiresAt: null, mode: 'test' },
        t.clock.now(),
      )
    ).key
    liveKeyOfSandbox = (
      await createApiKey(
        t.storage.db,
        { organisationId: sandbox.id, name: 'live', scopes: both, expiresAt: null },
        t.clock.now(),
      )
    ).key
    // Even if a real student were linked to the sandbox by mistake, a test key must not see them.
    await linkPastTheGuard(t.storage.db, [{ studentId: STUDENTS.ada, organisationId: sandbox.id }], t.clock.now())
    // And a sandbox student linked to a real organisation stays invisible to its live keys.
    await linkPastTheGuard(
      t.storage.db,
      [{ studentId: sandboxStudent, organisationId: t.fixtures.orgs.acme }],
      t.clock.now(),
    )
    await t.app.services.changes.check()
  })

  it('lets a test key read and enroll synthetic students without an agreement', async () => {
    expect(testKey).toMatch(/^cur_test_/)
    const progress = await t.call({ url: `/api/v1/students/${sandboxStudent}/progress`, headers: bearer(testKey) })
    expect(progress.statusCode).toBe(200)
    expect(progress.json().progress.length).toBeGreaterThan(0)
    const enroll = await t.call({
      method: 'POST',
      url: `/api/v1/students/${sandboxStudent}/enroll`,
      headers: bearer(testKey),
      payload: { tier: 'innovator' },
    })
    expect(enroll.statusCode).toBe(200)
    expect((await t.call({ url: '/api/v1/tiers', headers: bearer(testKey) })).statusCode).toBe(200)
  })

  it('never shows a real student to a test key', async () => {
    const res = await t.call({ url: `/api/v1/students/${STUDENTS.ada}/progress`, headers: bearer(testKey) })
    expect(res.statusCode).toBe(404)
  })

  it('never shows a sandbox student to a live key', async () => {
    const res = await t.call({
      url: `/api/v1/students/${sandboxStudent}/progress`,
      headers: bearer(t.fixtures.keys.readWrite),
    })
    expect(res.statusCode).toBe(404)
  })

  it('requires an agreement for a live key even on a sandbox organisation', async () => {
    const res = await t.call({ url: `/api/v1/students/${sandboxStudent}/progress`, headers: bearer(liveKeyOfSandbox) })
    expect(res.json().code).toBe('agreement_required')
  })
})
