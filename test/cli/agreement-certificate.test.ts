/**
 * `curriculum agreement ended`, `curriculum agreement certificate` and `curriculum agreement
 * dispose`, run as the operator runs them: the state of each ended agreement; a certificate of
 * deletion that verifies against the published key (and fails once changed), written to a new
 * file or printed, each issue audited; and the disposition on demand, which refuses what it
 * cannot dispose of, asks first on a terminal and needs --yes without one, is audited, and does
 * nothing the second time.
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import type { Kysely } from 'kysely'
import { beforeAll, describe, expect, it } from 'vitest'
import { verifyCertificate } from '../../src/domain/deletion-certificate.js'
import { keySet, loadSigningKey } from '../../src/services/signing-keys.js'
import { createApiKey, createOrganisation } from '../../src/storage/access-repository.js'
import { endAgreements } from '../../src/cases/agreement-end.js'
import { recordAgreement } from '../../src/cases/agreement-record.js'
import { disposeDueAgreements } from '../../src/cases/agreement-disposition.js'
import { attestDeletion } from '../../src/cases/deletion-attestation.js'
import { linkStudents, upsertStudents } from '../../src/storage/student-import-repository.js'
import { createEndpoint } from '../../src/storage/webhook-endpoint-repository.js'
import {
  CATALOG_DIR,
  CLI,
  cli,
  type CliResult,
  jsonOf,
  newDatabaseUrl,
  ROOT,
  tempDir,
  useCliHarness,
  withStorage,
} from './cli-harness.js'
import type { Database } from '../../src/storage/tables.js'

useCliHarness()

/** Students named Quill, each linked to every organisation given. */
async function linkedQuills(db: Kysely<Database>, ids: string[], organisationIds: string[], at: number) {
  await upsertStudents(
    db,
    ids.map((id) => ({ id, firstName: 'Quill', tier: 'explorer' as const })),
    at,
  )
  const links = organisationIds.flatMap((organisationId) => ids.map((studentId) => ({ studentId, organisationId })))
  await linkStudents(db, links, at)
}

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
      await linkedQuills(db, [uuid(1), uuid(2), uuid(3)], [acme], now - 300 * DAY)
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

/** Runs the CLI on a pseudo-terminal (util-linux `script`), answering `answer` once it asks. */
async function onTerminal(args: readonly string[], databaseUrl: string, answer: string): Promise<CliResult> {
  const quoted = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`
  const line = [process.execPath, CLI, ...args].map(quoted).join(' ')
  const child = spawn('script', ['-qfec', line, '/dev/null'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: databaseUrl, CATALOG_DIR },
  })
  let stdout = ''
  let answered = false
  try {
    return await new Promise<CliResult>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`never asked:\n${stdout}`)), 30_000)
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk
        if (!answered && stdout.includes('Proceed? [y/N]')) {
          answered = true
          // A terminal's Enter is a carriage return.
          child.stdin.write(`${answer}\r`)
        }
      })
      child.once('close', (code) => {
        clearTimeout(timer)
        resolve({ status: code ?? -1, stdout: stdout.replaceAll('\r\n', '\n'), stderr: '' })
      })
    })
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
}

describe('curriculum agreement dispose', () => {
  let databaseUrl: string
  const orgs: Record<'ended' | 'due' | 'inForce' | 'none', string> = { ended: '', due: '', inForce: '', none: '' }
  const dispositions = (organisationId: string) =>
    withStorage(databaseUrl, ({ db }) =>
      db.selectFrom('agreement_dispositions').selectAll().where('organisation_id', '=', organisationId).execute(),
    )
  const links = (organisationId: string) =>
    withStorage(databaseUrl, ({ db }) =>
      db
        .selectFrom('student_organisations')
        .select('student_id')
        .where('organisation_id', '=', organisationId)
        .execute(),
    )
  const audits = () =>
    withStorage(databaseUrl, ({ db }) =>
      db.selectFrom('audit_log').selectAll().where('action', '=', 'agreement.dispose').orderBy('id').execute(),
    )

  beforeAll(async () => {
    databaseUrl = newDatabaseUrl()
    const now = Date.now()
    await withStorage(databaseUrl, async ({ db }) => {
      const organisation = async (name: string, ended: number | null) => {
        const o = await createOrganisation(db, name, now - 400 * DAY)
        await recordAgreement(
          db,
          { organisationId: o.id, signedAt: now - 400 * DAY, expiresAt: null, documentRef: `DSA-${name}` },
          now - 400 * DAY,
        )
        if (ended !== null) await endAgreements(db, { organisationId: o.id }, ended)
        return o.id
      }
      // Ended 10 days ago with a 30-day period: not due yet. Ended 40 days ago: due.
      orgs.ended = await organisation('Ended Recently', now - 10 * DAY)
      orgs.due = await organisation('Due Already', now - 40 * DAY)
      orgs.inForce = await organisation('In Force', null)
      orgs.none = (await createOrganisation(db, 'No Agreement', now)).id
      await linkedQuills(db, [uuid(11), uuid(12)], [orgs.ended, orgs.due], now - 300 * DAY)
      await createEndpoint(
        db,
        { organisationId: orgs.ended, mode: 'live', url: 'https://hooks.example.org/in', events: ['student.unlinked'] },
        now - 300 * DAY,
      )
    })
  })

  it('refuses an organisation with an agreement in force or none, and an end whose period runs without --now', async () => {
    const inForce = await cli(['agreement', 'dispose', '--org', 'In Force', '--now', '--yes'], { databaseUrl })
    expect(inForce.status).toBe(1)
    expect(inForce.stderr).toMatch(/agreement DSA-In Force of In Force is in force: its data is shared on purpose/)
    const none = await cli(['agreement', 'dispose', '--org', 'No Agreement', '--now', '--yes', '--json'], {
      databaseUrl,
    })
    expect(none.status).toBe(1)
    expect(jsonOf(none).error.message).toMatch(/has no data-sharing agreement/)
    const early = await cli(['agreement', 'dispose', '--org', 'Ended Recently', '--yes'], { databaseUrl })
    expect(early.status).toBe(1)
    expect(early.stderr).toMatch(/runs until \S+: its links end then .* or add --now to end them now/)
    expect(await dispositions(orgs.ended)).toEqual([])
    expect(await audits()).toEqual([])
  })

  it('shows what it will do, and writes nothing on a dry run, without --yes off a terminal, or when declined', async () => {
    const dry = await cli(['agreement', 'dispose', '--org', 'Ended Recently', '--now', '--dry-run'], { databaseUrl })
    expect(dry.status).toBe(0)
    expect(dry.stdout).toMatch(/runs until \S+: --now ends the links before it/)
    expect(dry.stdout).toMatch(/ends 1 share still in force and the links to 2 students, .* to 1 endpoint/)
    expect(dry.stdout).toMatch(/dry run: nothing was written/)
    const unasked = await cli(['agreement', 'dispose', '--org', 'Ended Recently', '--now'], { databaseUrl })
    expect(unasked.status).toBe(3)
    expect(unasked.stdout).toMatch(/the links to 2 students/)
    expect(unasked.stderr).toMatch(/run it again with --yes, or on a terminal to be asked/)
    const declined = await onTerminal(['agreement', 'dispose', '--org', 'Ended Recently', '--now'], databaseUrl, 'n')
    expect(declined.status).toBe(3)
    expect(await dispositions(orgs.ended)).toEqual([])
    expect(await links(orgs.ended)).toHaveLength(2)
    expect(await audits()).toEqual([])
  })

  it('disposes of it before its period when confirmed on a terminal, audited, and does nothing the second time', async () => {
    const confirmed = await onTerminal(['agreement', 'dispose', '--org', 'Ended Recently', '--now'], databaseUrl, 'y')
    expect(confirmed.status, confirmed.stdout).toBe(0)
    expect(confirmed.stdout).toMatch(
      /disposed of agreement DSA-Ended Recently of Ended Recently: ended 1 share and the links to 2 students \(2 webhook deliveries queued\)/,
    )
    const [disposition] = await dispositions(orgs.ended)
    expect(Date.parse(disposition!.unlinked_at)).toBeLessThan(Date.parse(disposition!.deletion_due_at))
    expect(await links(orgs.ended)).toEqual([])
    // Not the other organisation's links, whose own disposition is the server's to do or this command's.
    expect(await links(orgs.due)).toHaveLength(2)
    const [audit] = await audits()
    expect(audit!.target).toBe(`organisation:${orgs.ended}`)
    expect(JSON.parse(audit!.detail).changed).toMatchObject({ early: true, students: 2, links: 2 })

    const again = await cli(['agreement', 'dispose', '--org', 'Ended Recently', '--now', '--yes', '--json'], {
      databaseUrl,
    })
    expect(again.status).toBe(0)
    expect(jsonOf(again)).toMatchObject({ ok: true, disposed: false, unlinkedAt: disposition!.unlinked_at })
    expect(await dispositions(orgs.ended)).toHaveLength(1)
    expect(await audits()).toHaveLength(1)
  })

  it('disposes of an end whose period is over with --yes and no --now', async () => {
    const done = await cli(['agreement', 'dispose', '--org', orgs.due, '--yes', '--json'], { databaseUrl })
    expect(done.status).toBe(0)
    expect(jsonOf(done)).toMatchObject({ ok: true, disposed: true, early: false, students: 2 })
    expect(await links(orgs.due)).toEqual([])
    expect(await audits()).toHaveLength(2)
  })
})
