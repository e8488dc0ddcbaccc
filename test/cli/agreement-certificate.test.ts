/**
 * `curriculum agreement ended` and `curriculum agreement certificate`, run as the operator runs
 * them: the state of each ended agreement, and a certificate of deletion that verifies against the
 * published key (and fails once changed), written to a new file or printed, each issue audited.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { verifyCertificate } from '../../src/domain/deletion-certificate.js'
import { keySet, loadSigningKey } from '../../src/services/signing-keys.js'
import {
  createApiKey,
  createOrganisation,
  endAgreements,
  recordAgreement,
} from '../../src/storage/access-repository.js'
import { disposeDueAgreements } from '../../src/storage/agreement-dispositions.js'
import { attestDeletion } from '../../src/storage/deletion-attestations.js'
import { linkStudents, upsertStudents } from '../../src/storage/student-import-repository.js'
import { cli, ensureBuilt, jsonOf, newDatabaseUrl, removeTempDirs, tempDir, withStorage } from './cli-harness.js'

beforeAll(ensureBuilt)
afterAll(removeTempDirs)

const DAY = 86_400_000
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`

describe('curriculum agreement ended and certificate', () => {
  let databaseUrl: string
  let acme: string
  let agreementId: string

  beforeAll(async () => {
    databaseUrl = newDatabaseUrl()
    // The CLI reads the real clock: the agreement ended 40 days ago, its period was 30 days.
    const now = Date.now()
    await withStorage(databaseUrl, async ({ db }) => {
      const organisation = await createOrganisation(db, 'Acme Learning', now - 400 * DAY)
      acme = organisation.id
      const agreement = await recordAgreement(
        db,
        { organisationId: acme, signedAt: now - 400 * DAY, expiresAt: null, documentRef: 'DSA-7', purpose: 'Reading' },
        now - 400 * DAY,
      )
      agreementId = agreement.id
      const ids = [uuid(1), uuid(2), uuid(3)]
      await upsertStudents(
        db,
        ids.map((id) => ({ id, firstName: 'Quill', tier: 'explorer' as const })),
        now - 300 * DAY,
      )
      await linkStudents(
        db,
        ids.map((studentId) => ({ studentId, organisationId: acme })),
        now - 300 * DAY,
      )
      await endAgreements(db, { organisationId: acme }, now - 40 * DAY)
      expect(await disposeDueAgreements(db, now)).toHaveLength(1)
    })
  })

  it('lists the end with its state: links ended, not attested yet', async () => {
    const before = jsonOf(await cli(['agreement', 'ended', '--json'], { databaseUrl }))
    expect(before.ends).toEqual([
      expect.objectContaining({
        organisation: 'Acme Learning',
        agreementId,
        documentRef: 'DSA-7',
        students: 3,
        unlinkedAt: expect.any(String),
        attestation: null,
      }),
    ])
    const text = await cli(['agreement', 'ended', '--org', 'Acme Learning'], { databaseUrl })
    expect(text.status).toBe(0)
    expect(text.stdout).toMatch(/Acme Learning\s+\S+\s+DSA-7 .* 3\s+not yet/)
  })

  it('issues a certificate that verifies against the published key, and audits it', async () => {
    await withStorage(databaseUrl, async ({ db }) => {
      const key = await createApiKey(
        db,
        { organisationId: acme, name: 'sync', scopes: ['students:read'], expiresAt: null },
        Date.now(),
      )
      expect(await attestDeletion(db, { organisationId: acme, by: { keyId: key.row.id } }, Date.now())).toMatchObject({
        outcome: 'attested',
      })
    })
    const file = path.join(tempDir(), 'certificate.json')
    const written = await cli(['agreement', 'certificate', '--org', 'Acme Learning', '--out', file, '--json'], {
      databaseUrl,
    })
    expect(jsonOf(written)).toMatchObject({ ok: true, file, agreementId, students: 3, attested: true })
    expect(fs.statSync(file).mode & 0o777).toBe(0o600)
    const document = JSON.parse(fs.readFileSync(file, 'utf8'))
    expect(document.certificate).toMatchObject({
      type: 'certificate-of-deletion',
      organisation: { id: acme, name: 'Acme Learning' },
      agreement: { id: agreementId, reference: 'DSA-7', purpose: 'Reading' },
      students: { count: 3, linkedAtEnd: 3, unlinkedEarlier: 0, erasedEarlier: 0 },
      attestation: { by: { kind: 'api_key', name: 'sync' } },
    })
    expect(document.certificate.students.list.map((s: { id: string }) => s.id)).toEqual([uuid(1), uuid(2), uuid(3)])
    const published = await withStorage(databaseUrl, async ({ db }) => keySet(await loadSigningKey(db)))
    expect(verifyCertificate(document, published.keys)).toBe(true)
    document.certificate.students.list.pop()
    expect(verifyCertificate(document, published.keys)).toBe(false)

    // Never over an existing file; printed without --out.
    const again = await cli(['agreement', 'certificate', '--org', acme, '--out', file], { databaseUrl })
    expect(again.status).toBe(1)
    expect(again.stderr).toMatch(/already exists/)
    const printed = await cli(['agreement', 'certificate', '--org', acme, '--actor', 'privacy desk'], { databaseUrl })
    expect(printed.status).toBe(0)
    expect(verifyCertificate(JSON.parse(printed.stdout), published.keys)).toBe(true)

    const audit = await withStorage(databaseUrl, ({ db }) =>
      db.selectFrom('audit_log').selectAll().where('action', '=', 'agreement.certificate').orderBy('id').execute(),
    )
    expect(audit.map((row) => [row.actor.startsWith('cli:'), row.target])).toEqual([
      [true, `organisation:${acme}`],
      [true, `organisation:${acme}`],
    ])
    expect(audit[1]!.actor).toBe('cli:privacy desk')
    expect(JSON.parse(audit[0]!.detail).changed).toMatchObject({ agreementId, students: 3, output: file })
  })

  it('refuses an organisation with nothing to certify, and writes no file', async () => {
    await withStorage(databaseUrl, async ({ db }) => {
      const beta = await createOrganisation(db, 'Beta Tutors', Date.now())
      await recordAgreement(
        db,
        { organisationId: beta.id, signedAt: Date.now() - DAY, expiresAt: null, documentRef: 'DSA-8' },
        Date.now(),
      )
    })
    const file = path.join(tempDir(), 'none.json')
    const refused = await cli(['agreement', 'certificate', '--org', 'Beta Tutors', '--out', file, '--json'], {
      databaseUrl,
    })
    expect(refused.status).toBe(1)
    expect(jsonOf(refused).error.message).toMatch(/no ended agreement/)
    expect(fs.existsSync(file)).toBe(false)
  })
})
