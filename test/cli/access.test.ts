/**
 * Organisations, agreements and keys, driven through the CLI from a fresh database: each step
 * checks both what the CLI says and what it stored (including the `access` version that tells
 * running servers to reload). Suspending an organisation and ending an agreement ask first.
 */
import { describe, expect, it } from 'vitest'
import { hashApiKey } from '../../src/domain/api-key.js'
import {
  countActiveKeys,
  createApiKey,
  createOrganisation,
  findKeyByHash,
} from '../../src/storage/access-repository.js'
import { recordAgreement } from '../../src/cases/agreement-record.js'
import { readVersions } from '../../src/storage/meta-repository.js'
import { cli, ENGINES, jsonOf, newDatabaseUrl, useCliHarness, withStorage } from './cli-harness.js'
import { expectConfirmation } from './confirmation-checks.js'

const KEY = /^cur_live_[0-9A-Za-z]{38}$/

useCliHarness()

describe('organisations, agreements and keys', () => {
  it('go through their whole life cycle', async () => {
    const databaseUrl = newDatabaseUrl()
    const run = (...args: string[]) => cli(args, { databaseUrl })
    const accessVersion = () => withStorage(databaseUrl, async ({ db }) => (await readVersions(db)).access)

    // Organisations
    const created = await run('org', 'create', '--name', 'Acme Learning', '--json')
    expect(created.status).toBe(0)
    const acme = jsonOf(created).organisation
    expect(acme).toMatchObject({ name: 'Acme Learning', status: 'active' })
    const duplicate = await run('org', 'create', '--name', 'Acme Learning', '--json')
    expect(duplicate.status).toBe(1)
    expect(jsonOf(duplicate).error.message).toMatch(/already exists/)
    expect((await run('org', 'create', '--name', 'Beta Tutors')).stdout).toMatch(
      /^created organisation Beta Tutors \([0-9a-f-]{36}\)\n$/,
    )

    const list = await run('org', 'list')
    expect(list.stdout).toMatch(/^ID +NAME +STATUS +CREATED\n/)
    expect(list.stdout).toContain('Acme Learning')
    expect(list.stdout).toContain('Beta Tutors')

    let version = await accessVersion()
    const suspended = jsonOf(await run('org', 'suspend', 'Acme Learning', '--yes', '--json'))
    expect(suspended).toMatchObject({ ok: true, changed: true, organisation: { id: acme.id, status: 'suspended' } })
    expect(await accessVersion()).toBe(version + 1)
    const again = jsonOf(await run('org', 'suspend', acme.id.toUpperCase(), '--json'))
    expect(again).toMatchObject({ changed: false, organisation: { status: 'suspended' } })
    expect(await accessVersion()).toBe(version + 1)
    expect((await run('org', 'reinstate', acme.id)).stdout).toBe(`Acme Learning (${acme.id}) is now active\n`)
    expect(await accessVersion()).toBe(version + 2)
    const missing = await run('org', 'suspend', 'Nobody Ltd')
    expect(missing.status).toBe(1)
    expect(missing.stderr).toBe('error: no organisation "Nobody Ltd"\n')

    // Agreements
    const recorded = jsonOf(
      await run(
        'agreement',
        'record',
        '--org',
        'Acme Learning',
        '--signed',
        '2026-01-31',
        '--expires',
        '2099-01-31',
        '--document',
        'DSA-2026-014',
        '--purpose',
        'Reading practice: the next lesson',
        '--data',
        'tier,first-name',
        '--disposition-days',
        '45',
        '--json',
      ),
    )
    expect(recorded.agreement).toMatchObject({
      organisationId: acme.id,
      signedAt: '2026-01-31T00:00:00.000Z',
      expiresAt: '2099-01-31T00:00:00.000Z',
      endedAt: null,
      documentRef: 'DSA-2026-014',
      state: 'active',
      purpose: 'Reading practice: the next lesson',
      dataCategories: ['first_name', 'tier'],
      dispositionDays: 45,
      deleteBy: '2099-03-17T00:00:00.000Z',
    })
    // Without --data and --disposition-days: every kind of data, AGREEMENT_DISPOSITION_DAYS.
    const defaults = await run(
      'agreement',
      'record',
      '--org',
      'Beta Tutors',
      '--signed',
      '2020-01-01T09:00:00+01:00',
      '--expires',
      '2021-01-01',
      '--document',
      'DSA-OLD',
      '--purpose',
      'Old purpose',
      '--json',
    )
    expect(jsonOf(defaults).agreement).toMatchObject({
      dataCategories: ['first_name', 'tier', 'progress'],
      dispositionDays: 30,
      deleteBy: '2021-01-31T00:00:00.000Z',
    })
    // Each term is checked before anything is opened: a usage error naming the option.
    const terms = ['record', '--org', 'Beta Tutors', '--signed', '2026-02-01', '--document', 'X']
    const refused = await Promise.all([
      run('agreement', ...terms, '--json'),
      run('agreement', ...terms, '--purpose', '  ', '--json'),
      run('agreement', ...terms, '--purpose', 'p', '--data', 'first_name,surname', '--json'),
      run('agreement', ...terms, '--purpose', 'p', '--data', ',', '--json'),
      run('agreement', ...terms, '--purpose', 'p', '--disposition-days', '3651', '--json'),
      run('agreement', ...terms, '--purpose', 'p\u001b[2J', '--json'),
    ])
    expect(refused.map((result) => [result.status, jsonOf(result).error.message])).toEqual([
      [2, "required option '--purpose <text>' not specified"],
      [2, expect.stringMatching(/--purpose <text>.*needs a purpose: what the partner may use the data for/)],
      [2, expect.stringMatching(/--data <categories>.*unknown data category "surname": use any of first_name, tier/)],
      [2, expect.stringMatching(/--data <categories>.*name at least one data category/)],
      [2, expect.stringMatching(/--disposition-days <days>.*whole number of days from 0 to 3650/)],
      [2, expect.stringMatching(/--purpose <text>.*cannot hold control characters/)],
    ])
    const backwards = await run(
      'agreement',
      'record',
      '--org',
      'Beta Tutors',
      '--signed',
      '2026-02-01',
      '--expires',
      '2026-01-01',
      '--document',
      'X',
      '--purpose',
      'p',
      '--json',
    )
    expect(backwards.status).toBe(1)
    expect(jsonOf(backwards).error.message).toMatch(/must expire after it is signed/)

    const agreements = jsonOf(await run('agreement', 'list', '--json')).agreements
    expect(
      agreements.map((a: { documentRef: string; state: string; signedAt: string }) => [
        a.documentRef,
        a.state,
        a.signedAt,
      ]),
    ).toEqual([
      ['DSA-OLD', 'expired', '2020-01-01T08:00:00.000Z'],
      ['DSA-2026-014', 'active', '2026-01-31T00:00:00.000Z'],
    ])
    expect(jsonOf(await run('agreement', 'list', '--org', 'Beta Tutors', '--json')).agreements).toHaveLength(1)

    const neither = await run('agreement', 'end', '--json')
    expect(neither.status).toBe(2)
    expect(jsonOf(neither).error.message).toMatch(/exactly one of --org/)
    const ended = jsonOf(await run('agreement', 'end', '--id', recorded.agreement.id, '--yes', '--json'))
    expect(ended.ended).toHaveLength(1)
    expect(ended.ended[0]).toMatchObject({ id: recorded.agreement.id, state: 'ended' })
    expect((await run('agreement', 'end', '--org', 'Acme Learning')).stdout).toMatch(/nothing to end/)
    const listed = (await run('agreement', 'list', '--org', 'Acme Learning')).stdout
    expect(listed).toMatch(/^ID +ORGANISATION +STATE +SIGNED +EXPIRES +ENDED +DOCUMENT +DATA +DELETE +PURPOSE\n/)
    expect(listed).toMatch(/DSA-2026-014 +first_name,tier +45d after end +Reading practice: the next lesson\n/)
    expect(listed).toMatch(/Acme Learning +ended +2026-01-31T00:00:00.000Z/)

    // Keys
    const made = await run(
      'key',
      'create',
      '--org',
      'Acme Learning',
      '--name',
      'production',
      '--scopes',
      'students:write,students:read',
      '--expires',
      '2099-12-31',
      '--json',
    )
    expect(made.status).toBe(0)
    const key = jsonOf(made)
    expect(key.key).toMatch(KEY)
    expect(key).toMatchObject({
      ok: true,
      name: 'production',
      organisationId: acme.id,
      scopes: ['students:read', 'students:write'],
      expiresAt: '2099-12-31T00:00:00.000Z',
      revokedAt: null,
      displayPrefix: key.key.slice(0, 15),
    })
    expect(key.note).toMatch(/cannot be shown again/)
    const stored = await withStorage(databaseUrl, ({ db }) => findKeyByHash(db, hashApiKey(key.key)))
    expect(stored).toMatchObject({ keyId: key.id, organisation: { id: acme.id } })

    const textKey = await run('key', 'create', '--org', 'Beta Tutors', '--name', 'catalog only')
    expect(textKey.status).toBe(0)
    const secret = textKey.stdout
      .split('\n')
      .map((line) => line.trim())
      .find((line) => KEY.test(line))
    expect(secret).toBeDefined()
    expect(textKey.stdout).toMatch(/cannot be shown again/)
    expect(textKey.stdout).toContain('scopes: (none: catalog only)')

    for (const listing of [await run('key', 'list'), await run('key', 'list', '--json')]) {
      expect(listing.status).toBe(0)
      for (const secretKey of [key.key, secret!]) {
        expect(listing.stdout).not.toContain(secretKey)
        expect(listing.stdout).not.toContain(hashApiKey(secretKey))
      }
      expect(listing.stdout).toContain(key.displayPrefix)
    }
    const keys = jsonOf(await run('key', 'list', '--org', acme.id, '--json')).keys
    expect(keys).toHaveLength(1)
    expect(Object.keys(keys[0]).sort()).toEqual([
      'createdAt',
      'displayPrefix',
      'expiresAt',
      'id',
      'lastUsedAddress',
      'lastUsedAgent',
      'lastUsedAt',
      'mode',
      'name',
      'organisation',
      'organisationId',
      'replacedBy',
      'revokedAt',
      'rolledAt',
      'scopes',
      'state',
    ])

    version = await accessVersion()
    const revoked = jsonOf(await run('key', 'revoke', key.displayPrefix, '--json'))
    expect(revoked).toMatchObject({ ok: true, alreadyRevoked: false, key: { id: key.id } })
    expect(revoked.key.revokedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect(await accessVersion()).toBe(version + 1)
    expect((await run('key', 'revoke', key.id)).stdout).toMatch(/was already revoked at/)
    const afterRevoke = jsonOf(await run('key', 'list', '--org', 'Acme Learning', '--json')).keys
    expect(afterRevoke[0].revokedAt).toBe(revoked.key.revokedAt)
    expect(afterRevoke[0].state).toBe('revoked')
    const stillStored = await withStorage(databaseUrl, ({ db }) => findKeyByHash(db, hashApiKey(key.key)))
    expect(stillStored?.revokedAt).toBe(Date.parse(revoked.key.revokedAt))

    const unknownKey = await run('key', 'revoke', 'cur_live_nothing', '--json')
    expect(unknownKey.status).toBe(1)
    expect(jsonOf(unknownKey).error.message).toBe('no key "cur_live_nothing"')
  }, 120_000)

  it('creates keys without announcing an access change, and at most 10 active keys per organisation, also when two race for the last', async () => {
    const databaseUrl = newDatabaseUrl()
    const run = (...args: string[]) => cli([...args, '--json'], { databaseUrl })
    const acme = jsonOf(await run('org', 'create', '--name', 'Acme Learning')).organisation
    const accessVersion = () => withStorage(databaseUrl, async ({ db }) => (await readVersions(db)).access)
    const version = await accessVersion()
    expect(jsonOf(await run('key', 'create', '--org', 'Acme Learning', '--name', 'first')).ok).toBe(true)
    // A new key is a cache miss everywhere: nothing for running instances to forget.
    expect(await accessVersion()).toBe(version)
    await withStorage(databaseUrl, async ({ db }) => {
      for (let i = 2; i <= 9; i++)
        await createApiKey(db, { organisationId: acme.id, name: `key ${i}`, scopes: [], expiresAt: null }, Date.now())
    })
    // Two operator processes at 9 of 10: SQLite's BEGIN IMMEDIATE lets one count and insert at a time.
    const raced = await Promise.all([
      run('key', 'create', '--org', 'Acme Learning', '--name', 'a'),
      run('key', 'create', '--org', 'Acme Learning', '--name', 'b'),
    ])
    expect(raced.map((result) => result.status).sort()).toEqual([0, 1])
    const refused = raced.find((result) => result.status === 1)!
    expect(jsonOf(refused)).toEqual({
      ok: false,
      error: {
        message:
          'the organisation already has 10 active keys, the most it may have; revoke one it no longer uses first',
        problems: [],
      },
    })
    const text = await cli(['key', 'create', '--org', 'Acme Learning', '--name', 'c'], { databaseUrl })
    expect(text.status).toBe(1)
    expect(text.stderr).toBe(
      'error: the organisation already has 10 active keys, the most it may have; revoke one it no longer uses first\n',
    )
    expect(await withStorage(databaseUrl, ({ db }) => countActiveKeys(db, acme.id, Date.now()))).toBe(10)
  })

  it('rolls a key: a new key like it, the old one until the overlap ends (or revoked for now), audited', async () => {
    const databaseUrl = newDatabaseUrl()
    const run = (...args: string[]) => cli([...args, '--json'], { databaseUrl })
    jsonOf(await run('org', 'create', '--name', 'Acme Learning'))
    const old = jsonOf(
      await run('key', 'create', '--org', 'Acme Learning', '--name', 'prod', '--scopes', 'students:read'),
    )
    const before = Date.now()
    const rolled = jsonOf(await run('key', 'roll', `${old.displayPrefix}…`, '--overlap', '24h'))
    expect(rolled).toMatchObject({
      ok: true,
      name: 'prod',
      scopes: ['students:read'],
      expiresAt: null,
      state: 'active',
    })
    expect(rolled.key).toMatch(KEY)
    expect(rolled.replaces).toMatchObject({ id: old.id, replacedBy: rolled.id, revokedAt: null, state: 'active' })
    const stops = Date.parse(rolled.replaces.expiresAt)
    expect(stops - Date.parse(rolled.replaces.rolledAt)).toBe(24 * 3_600_000)
    expect(stops).toBeGreaterThanOrEqual(before + 24 * 3_600_000)
    const stored = await withStorage(databaseUrl, ({ db }) => findKeyByHash(db, hashApiKey(rolled.key)))
    expect(stored).toMatchObject({ keyId: rolled.id, rolledAt: null })

    const again = await run('key', 'roll', old.id, '--overlap', '1h')
    expect([again.status, jsonOf(again).error.message]).toEqual([1, `the key ${old.displayPrefix}… was rolled already`])
    const wrong = await cli(['key', 'roll', rolled.id, '--overlap', '2h'], { databaseUrl })
    expect(wrong.status).not.toBe(0)
    expect(wrong.stderr).toMatch(/neither an overlap \(now, 1h, 24h, 7d\) nor a date/)

    const leaked = jsonOf(await run('key', 'roll', rolled.id, '--overlap', 'now'))
    expect(leaked.replaces).toMatchObject({ id: rolled.id, state: 'revoked' })
    const text = (await cli(['key', 'list', '--org', 'Acme Learning'], { databaseUrl })).stdout
    expect(text).toContain(leaked.displayPrefix)
    const audit = await withStorage(databaseUrl, ({ db }) =>
      db.selectFrom('audit_log').selectAll().where('action', '=', 'key.roll').orderBy('at').execute(),
    )
    expect(audit.map((row) => row.target)).toEqual([`key:${old.id}`, `key:${rolled.id}`])
    for (const row of audit) expect(JSON.stringify(row)).not.toMatch(/cur_live_[0-9A-Za-z]{38}/)
  })

  it('applies migrations on request and reports them once', async () => {
    const databaseUrl = newDatabaseUrl()
    const first = await cli(['migrate', '--json'], { databaseUrl })
    expect(jsonOf(first)).toEqual({
      ok: true,
      applied: [
        '0001-initial',
        '0002-dashboard',
        '0003-access-changes',
        '0004-key-views',
        '0005-disclosure-segments',
        '0006-student-changes',
        '0007-webhooks',
        '0008-clustered-progress',
        '0009-webhook-trust',
        '0010-student-notices',
        '0011-agreement-terms',
        '0012-schools-and-shares',
        '0013-agreement-disposition',
        '0014-roster-sources',
        '0015-erased-student-schools',
        '0016-student-departures',
        '0017-mail-outbox',
        '0018-account-links',
        '0019-second-factors',
        '0020-memberships',
        '0021-second-factor-sessions',
        '0022-notices',
        '0023-operator-roles',
        '0024-organisation-two-step',
        '0025-passkey-challenges',
        '0026-key-rolling',
        '0027-request-log',
        '0028-lti',
        '0029-standards-alignment',
      ],
    })
    const second = await cli(['migrate'], { databaseUrl })
    expect(second.stdout).toBe('the database is up to date\n')
  })
})

describe('curriculum operator create', () => {
  it('creates an operator who can sign in to the dashboard with the password printed once', async () => {
    const databaseUrl = newDatabaseUrl()
    const created = jsonOf(await cli(['operator', 'create', '--email', 'Ops@Example.org', '--json'], { databaseUrl }))
    expect(created.account).toMatchObject({ email: 'ops@example.org', role: 'operator' })
    expect(created.password).toMatch(/^[\w-]{24}$/)
    await withStorage(databaseUrl, async ({ db }) => {
      const { findAccountByEmail } = await import('../../src/storage/account-repository.js')
      const { verifyPassword } = await import('../../src/domain/passwords.js')
      const account = (await findAccountByEmail(db, 'ops@example.org'))!
      expect(account.password_hash).not.toContain(created.password)
      expect(await verifyPassword(created.password, account.password_hash)).toBe(true)
    })
    const duplicate = await cli(['operator', 'create', '--email', 'ops@example.org', '--json'], { databaseUrl })
    expect(duplicate.status).toBe(1)
    expect(jsonOf(duplicate).ok).toBe(false)
  })

  it('refuses a common password given on standard input, and creates no account', async () => {
    const databaseUrl = newDatabaseUrl()
    const args = ['operator', 'create', '--email', 'ops2@example.org', '--password-stdin']
    const refused = await cli(args, { databaseUrl, input: 'Qwerty123456\n' })
    expect(refused.status).toBe(1)
    expect(refused.stderr).toMatch(/^error: password refused: This is one of the most common passwords/)
    const accepted = await cli([...args, '--json'], { databaseUrl, input: 'a long and memorable phrase\n' })
    expect(jsonOf(accepted).account).toMatchObject({ email: 'ops2@example.org', role: 'operator' })
  })
})

describe.each(ENGINES)('ending access on %s', (_engine, databaseUrlOf) => {
  /** Acme Learning with one key in force and one agreement in force. */
  async function arrange(): Promise<string> {
    const databaseUrl = databaseUrlOf()
    await withStorage(databaseUrl, async ({ db }) => {
      const acme = await createOrganisation(db, 'Acme Learning', Date.now())
      await createApiKey(db, { organisationId: acme.id, name: 'production', scopes: [], expiresAt: null }, Date.now())
      await recordAgreement(
        db,
        { organisationId: acme.id, signedAt: Date.parse('2026-01-31'), expiresAt: null, documentRef: 'DSA-1' },
        Date.now(),
      )
    })
    return databaseUrl
  }

  it('org suspend shows what stops and asks', async () => {
    await expectConfirmation({
      argv: ['org', 'suspend', 'Acme Learning'],
      arrange,
      state: (databaseUrl) =>
        withStorage(databaseUrl, ({ db }) => db.selectFrom('organisations').select(['name', 'status']).execute()),
      preview:
        /^suspend Acme Learning \(.*\), 1 key in force: every request with any of its keys gets 403 organisation_suspended/,
    })
  }, 180_000)

  it('agreement end shows what ends and asks', async () => {
    await expectConfirmation({
      argv: ['agreement', 'end', '--org', 'Acme Learning'],
      arrange,
      state: (databaseUrl) =>
        withStorage(databaseUrl, ({ db }) =>
          db.selectFrom('agreements').select(['document_ref', 'ended_at']).execute(),
        ),
      preview:
        /^end 1 agreement of Acme Learning \(.*\): DSA-1 \(.*, active\)\nAcme Learning then has no agreement in force: its keys get 403 agreement_required on every student endpoint at once \(0 students linked\)/,
    })
  }, 180_000)
})
