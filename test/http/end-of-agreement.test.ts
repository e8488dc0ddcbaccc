/**
 * The end of an agreement through the API, on the clock: student endpoints refuse at once while
 * `POST /api/v1/deletion-attestations` works for the organisation whose agreement ended (with a
 * live key that has a student scope), once per agreement, also when two race; after the
 * disposition period the links end with notices and webhooks; and a certificate of deletion
 * downloaded from the dashboard verifies with node:crypto against the key published at
 * `/.well-known/curriculum-signing-keys`, and fails once changed. The attestation and the
 * certificate cover every student the partner received under the agreement: those linked at the
 * end, and those unlinked or erased earlier, each with the notice that asked for its deletion.
 */
import { createPublicKey, verify } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { createSandbox } from '../../src/cases/sandbox.js'
import { createApiKey } from '../../src/storage/access-repository.js'
import { endAgreements } from '../../src/cases/agreement-end.js'
import { pageStudentChanges } from '../../src/storage/student-change-log.js'
import { linkStudents, upsertStudents } from '../../src/storage/student-import-repository.js'
import { eraseStudents } from '../../src/cases/erasure.js'
import { unlinkStudent } from '../../src/cases/unlink.js'
import { createEndpoint } from '../../src/storage/webhook-endpoint-repository.js'
import { type DashboardClient, OPERATOR, signedInOperator } from '../dashboard/dashboard-client.js'
import { bearer, buildTestApp, STUDENTS, testConfig } from '../helper.js'
import { perSuite } from '../support/built.js'

const DAY = 86_400_000
const URL = '/api/v1/deletion-attestations'
/** Read by Acme under its agreement, then unlinked (Eve) or erased (Fay) before it ended. */
const EVE = '55555555-5555-4555-8555-555555555555'
const FAY = '66666666-6666-4666-8666-666666666666'

/** RFC 8785 for the values a certificate holds, written here apart from the service's own. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value !== null && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((name) => `${JSON.stringify(name)}:${canonical((value as Record<string, unknown>)[name])}`)
      .join(',')}}`
  return JSON.stringify(value)
}

/** What the tampering below changes of a certificate. */
interface Tamperable {
  students: { list: unknown[] }
  attestation: { attestedAt: string }
  unlinkedAt: string
  organisation: { name: string }
}

/** The same value with every object's members in reverse order. */
function reversed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversed)
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([name, member]) => [name, reversed(member)]),
  )
}

describe('the end of an agreement through the API', () => {
  const t = perSuite(() => buildTestApp({ env: { RATE_LIMIT: '100000', ORGANISATION_RATE_LIMIT: '100000' } }))
  let endedAt: number
  let unlinkedAt: number
  let operator: DashboardClient

  beforeAll(async () => {
    await createEndpoint(
      t.storage.db,
      {
        organisationId: t.fixtures.orgs.acme,
        mode: 'live',
        url: 'https://hooks.example.org/in',
        events: ['student.unlinked'],
      },
      t.clock.now(),
    )
    await upsertStudents(
      t.storage.db,
      [EVE, FAY].map((id) => ({ id, firstName: 'Kid', tier: 'explorer' as const })),
      t.clock.now(),
    )
    await linkStudents(
      t.storage.db,
      [EVE, FAY].map((studentId) => ({ studentId, organisationId: t.fixtures.orgs.acme })),
      t.clock.now(),
    )
    for (const student of [EVE, FAY]) {
      const read = await t.call({ url: `/api/v1/students/${student}/progress`, headers: bearer(t.fixtures.keys.read) })
      expect(read.statusCode).toBe(200)
    }
    t.clock.advance(1000)
    unlinkedAt = t.clock.now()
    await unlinkStudent(t.storage.db, EVE, t.fixtures.orgs.acme, unlinkedAt)
    await eraseStudents(t.storage.db, [FAY], unlinkedAt)
    t.clock.advance(1000)
    endedAt = t.clock.now()
    await endAgreements(t.storage.db, { organisationId: t.fixtures.orgs.acme }, endedAt)
    await t.app.services.changes.check()
    operator = await signedInOperator(t, '192.0.2.70')
  })

  const attest = (key: string, payload?: object) =>
    t.call({ method: 'POST', url: URL, headers: bearer(key), ...(payload === undefined ? {} : { payload }) })

  it('refuses student endpoints at once and keeps the links within the disposition period', async () => {
    const progress = await t.call({
      url: `/api/v1/students/${STUDENTS.ada}/progress`,
      headers: bearer(t.fixtures.keys.read),
    })
    expect(progress.json().code).toBe('agreement_required')
    t.clock.advance(30 * DAY - 1)
    expect(await t.app.services.disposer.run()).toBe(0)
    const links = await t.storage.db
      .selectFrom('student_organisations')
      .select('student_id')
      .where('organisation_id', '=', t.fixtures.orgs.acme)
      .execute()
    expect(links).toHaveLength(3)
  })

  it('takes no attestation from a key without a student scope, a test key, or an organisation with nothing ended', async () => {
    const catalog = await attest(t.fixtures.keys.catalog, {})
    expect(catalog.statusCode).toBe(403)
    expect(catalog.json().code).toBe('insufficient_scope')
    expect(catalog.headers['www-authenticate']).toBe(
      'Bearer realm="curriculum-api", error="insufficient_scope", scope="students:read"',
    )
    for (const key of [t.fixtures.keys.otherOrg, t.fixtures.keys.noAgreement]) {
      const res = await attest(key, {})
      expect(res.statusCode).toBe(404)
      expect(res.json().code).toBe('nothing_to_attest')
    }
    const sandbox = await createSandbox(t.storage.db, 'attest@example.org', t.clock.now())
    const test = await createApiKey(
      t.storage.db,
      { organisationId: sandbox.id, name: 't', scopes: ['students:read'], expiresAt: null, mode: 'test' },
      t.clock.now(),
    )
    const refused = await attest(test.key, {})
    expect(refused.statusCode).toBe(404)
    expect(refused.json().detail).toMatch(/test key/)
  })

  it('refuses a malformed body with 400 and a body of another type with 415', async () => {
    const key = t.fixtures.keys.read
    const bad = await attest(key, { agreementId: 'not-a-uuid' })
    expect(bad.statusCode).toBe(400)
    expect(bad.json().errors).toEqual([{ in: 'body', field: '/agreementId', detail: expect.stringMatching(/UUID/) }])
    expect((await attest(key, { agreement: 'x' })).json().errors[0].detail).toBe('unknown field "agreement"')
    const text = await t.call({
      method: 'POST',
      url: URL,
      headers: { ...bearer(key), 'content-type': 'text/plain' },
      payload: 'yes',
    })
    expect(text.statusCode).toBe(415)
  })

  it('records an attestation made within the period, with the key, once', async () => {
    const [agreement] = await t.storage.db
      .selectFrom('agreements')
      .selectAll()
      .where('organisation_id', '=', t.fixtures.orgs.acme)
      .execute()
    // No body at all: the one agreement awaiting an attestation.
    const made = await attest(t.fixtures.keys.read)
    expect(made.statusCode, made.body).toBe(201)
    expect(made.json()).toEqual({
      agreementId: agreement!.id,
      documentRef: agreement!.document_ref,
      endedAt: new Date(endedAt).toISOString(),
      deletionDueAt: new Date(endedAt + 30 * DAY).toISOString(),
      unlinkedAt: null,
      students: 5,
      coverage: { since: agreement!.signed_at, linked: 3, unlinked: 1, erased: 1 },
      attestedAt: new Date(t.clock.now()).toISOString(),
      keyId: t.fixtures.keyIds.read,
    })
    const again = await attest(t.fixtures.keys.write, { agreementId: agreement!.id.toUpperCase() })
    expect(again.statusCode).toBe(409)
    expect(again.json()).toMatchObject({ code: 'already_attested', detail: expect.stringMatching(/cur_live_/) })
  })

  it('ends the links once the period is over, with a notice and a webhook each, and certifies it', async () => {
    t.clock.advance(1)
    expect(await t.app.services.disposer.run()).toBe(1)
    expect(await t.app.services.disposer.run()).toBe(0)
    const notices = (await pageStudentChanges(
      t.storage.db,
      { organisationId: t.fixtures.orgs.acme, sandbox: false },
      0,
      500,
    ))!.changes.filter((c) => c.type === 'student_unlinked')
    // Eve's notice was sent when she was unlinked, before the agreement ended.
    expect(notices.map((n) => n.studentId).sort()).toEqual([STUDENTS.ada, STUDENTS.ben, STUDENTS.dev, EVE].sort())
    const deliveries = await t.storage.db
      .selectFrom('webhook_deliveries')
      .select(['student_id', 'event_type'])
      .execute()
    expect(deliveries.filter((d) => d.event_type === 'student.unlinked')).toHaveLength(4)

    const keys = await t.call({ url: '/.well-known/curriculum-signing-keys' })
    expect(keys.statusCode).toBe(200)
    expect(keys.headers['content-type']).toMatch(/^application\/jwk-set\+json/)
    const [jwk] = keys.json().keys
    // Signed in again: the session of a month ago has expired.
    expect((await operator.signIn(OPERATOR.email, OPERATOR.password)).statusCode).toBe(303)
    const [agreement] = await t.storage.db
      .selectFrom('agreements')
      .select('id')
      .where('organisation_id', '=', t.fixtures.orgs.acme)
      .execute()
    const download = await operator.get(
      `/dashboard/operator/organisations/${t.fixtures.orgs.acme}/agreements/${agreement!.id}/certificate.json`,
    )
    expect(download.statusCode).toBe(200)
    expect(download.headers['content-disposition']).toMatch(/^attachment; filename="certificate-of-deletion-/)
    const document = JSON.parse(download.body)
    expect(document.signature.kid).toBe(jwk.kid)
    expect(document.certificate).toMatchObject({
      organisation: { id: t.fixtures.orgs.acme, name: 'Acme Learning' },
      endedAt: new Date(endedAt).toISOString(),
      unlinkedAt: new Date(t.clock.now()).toISOString(),
      attestation: { by: { kind: 'api_key', keyId: t.fixtures.keyIds.read, name: 'read' }, students: 5 },
      students: { count: 5, linkedAtEnd: 3, unlinkedEarlier: 1, erasedEarlier: 1 },
    })
    const unlinked = new Date(t.clock.now()).toISOString()
    const earlier = new Date(unlinkedAt).toISOString()
    expect(document.certificate.students.list).toEqual(
      [
        ...[STUDENTS.ada, STUDENTS.ben, STUDENTS.dev].map((id) => ({
          id,
          askedBy: 'disposition',
          askedAt: unlinked,
          webhook: 'pending',
        })),
        { id: EVE, askedBy: 'student.unlinked', askedAt: earlier, webhook: 'pending' },
        // The endpoint did not subscribe to erasures: the change feed carried that notice alone.
        { id: FAY, askedBy: 'student.deleted', askedAt: earlier, webhook: 'no_endpoint' },
      ].sort((a, b) => (a.id < b.id ? -1 : 1)),
    )
    expect(document.certificate.statement).toMatch(/its attestation covers this whole list/)
    const publicKey = createPublicKey({ key: jwk, format: 'jwk' })
    const signature = Buffer.from(document.signature.value, 'base64')
    expect(verify(null, Buffer.from(canonical(document.certificate)), publicKey, signature)).toBe(true)
    // The same bytes whatever the order of the members: re-indented and reordered, it still verifies.
    const reordered = JSON.parse(JSON.stringify(reversed(document.certificate), null, 4))
    expect(verify(null, Buffer.from(canonical(reordered)), publicKey, signature)).toBe(true)
    for (const tamper of [
      (c: Tamperable) => c.students.list.pop(),
      (c: Tamperable) => (c.attestation.attestedAt = c.unlinkedAt),
      (c: Tamperable) => (c.organisation.name = 'Acme Learning Ltd'),
    ]) {
      const changed = structuredClone(document.certificate)
      tamper(changed)
      expect(verify(null, Buffer.from(canonical(changed)), publicKey, signature)).toBe(false)
    }
    const audit = await t.storage.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'agreement.certificate')
      .execute()
    expect(audit).toHaveLength(1)
  })

  it('publishes the same key from every instance', async () => {
    const second = await buildApp({
      config: testConfig(),
      storage: t.storage,
      clock: t.clock,
      logger: false,
      pollChanges: false,
    })
    try {
      const there = await second.inject({ url: '/.well-known/curriculum-signing-keys' })
      const here = await t.call({ url: '/.well-known/curriculum-signing-keys' })
      expect(there.json()).toEqual(here.json())
      expect(here.json().keys).toHaveLength(1)
    } finally {
      await second.close()
    }
  })

  it('records one of two attestations sent at once and answers the other 409', async () => {
    await endAgreements(t.storage.db, { organisationId: t.fixtures.orgs.beta }, t.clock.now())
    await t.app.services.changes.check()
    const other = await createApiKey(
      t.storage.db,
      { organisationId: t.fixtures.orgs.beta, name: 'second', scopes: ['students:write'], expiresAt: null },
      t.clock.now(),
    )
    const answers = await Promise.all([attest(t.fixtures.keys.otherOrg, {}), attest(other.key, {})])
    expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 409])
    expect(
      await t.storage.db
        .selectFrom('deletion_attestations')
        .selectAll()
        .where('organisation_id', '=', t.fixtures.orgs.beta)
        .execute(),
    ).toHaveLength(1)
  })
})
