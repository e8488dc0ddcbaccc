/**
 * `curriculum lti registrations` lists the platforms registered (text and --json), and
 * `curriculum lti key rotate` puts a new tool key in use with one audit row, the old key still
 * published and no private key in what it prints or records.
 */
import { describe, expect, it } from 'vitest'
import { recordRegistration } from '../../src/cases/lti-registrations.js'
import { loadToolKey } from '../../src/cases/lti-tool-key.js'
import { systemClock } from '../../src/clock.js'
import { TOOL_SCOPES } from '../../src/domain/lti-claims.js'
import { createOrganisation } from '../../src/storage/access-repository.js'
import { retiredToolKeys } from '../../src/storage/lti-tool-key-repository.js'
import { cli, jsonOf, newDatabaseUrl, useCliHarness, withStorage } from './cli-harness.js'

useCliHarness()

describe('curriculum lti', () => {
  it('lists the registrations, none at first', async () => {
    const databaseUrl = newDatabaseUrl()
    const empty = await cli(['lti', 'registrations'], { databaseUrl })
    expect(empty.status).toBe(0)
    expect(empty.stdout).toBe('no LTI registrations\n')
    await withStorage(databaseUrl, async ({ db }) => {
      const organisation = await createOrganisation(db, 'Hillside District', Date.now())
      await recordRegistration(
        db,
        {
          organisationId: organisation.id,
          schoolId: null,
          linkId: null,
          method: 'manual',
          name: 'Hillside Moodle',
          issuer: 'https://moodle.hillside.example',
          clientId: 'Zq8a1',
          authLoginUrl: 'https://moodle.hillside.example/mod/lti/auth.php',
          tokenUrl: 'https://moodle.hillside.example/mod/lti/token.php',
          tokenAudience: null,
          jwksUri: 'https://moodle.hillside.example/mod/lti/certs.php',
          product: 'moodle',
          scopes: TOOL_SCOPES,
          deploymentIds: ['1', '2'],
        },
        { actor: 'account:ops@example.org' },
        systemClock,
      )
    })
    const listed = await cli(['lti', 'registrations', '--json'], { databaseUrl })
    expect(listed.status).toBe(0)
    expect(jsonOf(listed).registrations).toEqual([
      expect.objectContaining({
        name: 'Hillside Moodle',
        status: 'pending',
        method: 'manual',
        organisation: { id: expect.any(String), name: 'Hillside District' },
        school: null,
        product: 'moodle',
        issuer: 'https://moodle.hillside.example',
        clientId: 'Zq8a1',
        deployments: ['1', '2'],
        scopes: [...TOOL_SCOPES],
        activatedAt: null,
      }),
    ])
    const text = await cli(['lti', 'registrations'], { databaseUrl })
    expect(text.stdout).toContain('Hillside Moodle')
    expect(text.stdout).toContain('pending')
    expect(text.stdout).toContain('1 2')
  })

  it('rotates the tool key once, audited, keeping the old key published and every private key out', async () => {
    const databaseUrl = newDatabaseUrl()
    const before = await withStorage(databaseUrl, async ({ db }) => loadToolKey(db))
    const rotated = await cli(['lti', 'key', 'rotate', '--json', '--actor', 'Sam'], { databaseUrl })
    expect(rotated.status).toBe(0)
    const { key } = jsonOf(rotated)
    expect(key.retired).toBe(before.publicJwk.kid)
    expect(key.current).not.toBe(before.publicJwk.kid)
    const privateText = before.privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64url')
    expect(rotated.stdout).not.toContain(privateText)
    await withStorage(databaseUrl, async ({ db }) => {
      expect((await loadToolKey(db)).publicJwk.kid).toBe(key.current)
      const retired = await retiredToolKeys(db, new Date().toISOString())
      expect(retired.map((r) => r.jwk.kid)).toEqual([key.retired])
      const audit = await db.selectFrom('audit_log').selectAll().execute()
      expect(audit).toHaveLength(1)
      expect(audit[0]).toMatchObject({ actor: 'cli:Sam', action: 'lti.key.rotate', target: 'lti-tool-key' })
      expect(audit[0]!.detail).not.toContain(privateText)
    })
    const text = await cli(['lti', 'key', 'rotate'], { databaseUrl })
    expect(text.stdout).toContain(`${key.current} stays published for 7 days`)
  })
})
