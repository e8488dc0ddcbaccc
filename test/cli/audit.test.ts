/**
 * The operator audit log covers the command line: every command that changes something leaves
 * exactly one row naming who ran it, the command and its arguments, and what it changed, and
 * never a key, password or hash; read-only commands leave none. The commands come from the
 * program itself, so a new command fails here until it is placed in one table or the other.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Command } from 'commander'
import { describe, expect, it } from 'vitest'
import { auditedAction, auditedArguments, osUser } from '../../src/cli/audit.js'
import { doesWork } from '../../src/cli/options.js'
import { studentImport } from '../../src/cli/commands/students/import.js'
import { runRecordImport } from '../../src/imports/record-import.js'
import type { ImportChange } from '../../src/imports/record-spec.js'
import { buildProgram } from '../../src/cli/program.js'
import { hashApiKey } from '../../src/domain/api-key.js'
import { createApiKey, createOrganisation } from '../../src/storage/access-repository.js'
import { recordAgreement } from '../../src/cases/agreement-record.js'
import { manifest, ORGS_HEADER, table, USERS_11_HEADER, writeFolder } from '../roster/roster-export.js'
import { recordAudit } from '../../src/storage/audit-repository.js'
import type { AuditRow } from '../../src/storage/tables.js'
import {
  CATALOG_DIR,
  cli,
  type CliResult,
  jsonOf,
  newDatabaseUrl,
  tempDir,
  useCliHarness,
  withStorage,
} from './cli-harness.js'
import { CASE_PACKAGE } from '../support/case-fixture.js'
import { rowCount } from '../support/row-count.js'

const ADA = '11111111-1111-4111-8111-111111111111'
const BEN = '22222222-2222-4222-8222-222222222222'
const OS_USER = os.userInfo().username

useCliHarness()

/** What the commands run so far printed or stored that an audit row must never hold. */
interface Secrets {
  values: string[]
}

/** What a command printed with --json. */
type Document = ReturnType<typeof jsonOf>

interface Case {
  /** Cases of one stage run at once; each stage needs what the earlier ones made. */
  stage: 1 | 2 | 3 | 4 | 5 | 6
  argv: string[]
  action: string
  /** The target, from what the command printed with --json. */
  target: (document: Document) => string
  changed: (document: Document) => Record<string, unknown>
  input?: string
  /** Collects the secrets the run produced. */
  secrets?: (document: Document, secrets: Secrets, databaseUrl: string) => Promise<void>
}

const STUDENTS_CSV = `id,firstName,tier\n${ADA},Ada,explorer\n${BEN},Ben,builder\n`
const LINKS_CSV = `studentId,organisation\n${ADA},Acme Learning\n${BEN},Acme Learning\n`
const PROGRESS_CSV =
  'studentId,lessonSlug,status,xp,timeSeconds,startedAt,completedAt\n' +
  `${ADA},explorer/e1-robots-follow-instructions,in_progress,5,60,2026-01-11T10:00:00Z,\n`
const MEMBERS_CSV = `studentId,school\n${ADA},Hillside Primary\n${BEN},Hillside Primary\n`
const CLUB_CSV = `student\n${ADA}\n`
const STDIN_PASSWORD = 'quiet-harbour-lantern-47'

/** A district's roster export (OneRoster 1.1, bulk): one school, one student. */
const ROSTER_FILES = {
  'manifest.csv': manifest('1.1', { orgs: 'bulk', users: 'bulk' }),
  'orgs.csv': table(ORGS_HEADER, [{ sourcedId: 'sch-1', name: 'North Elementary', type: 'school' }]),
  'users.csv': table(USERS_11_HEADER, [
    { sourcedId: 'stu-1', role: 'student', orgSourcedIds: 'sch-1', givenName: 'Cleo', familyName: 'Surname' },
  ]),
}

/** Every changing command. */
const CHANGING: Case[] = [
  {
    stage: 1,
    argv: ['roster', 'import', 'roster'],
    action: 'roster.import',
    target: () => 'roster:roster',
    changed: () => ({ version: '1.1', kind: 'bulk' }),
  },
  {
    stage: 1,
    argv: ['migrate'],
    action: 'database.migrate',
    target: () => 'database',
    changed: () => ({ applied: [] }),
  },
  {
    stage: 1,
    argv: ['catalog', 'import', CATALOG_DIR],
    action: 'catalog.import',
    target: () => 'catalog',
    changed: (d) => ({ dir: CATALOG_DIR, catalogVersion: d.catalogVersion, tiers: 3, lessons: d.lessons }),
  },
  {
    stage: 1,
    argv: ['org', 'create', '--name', 'Acme Learning'],
    action: 'organisation.create',
    target: (d) => `organisation:${d.organisation.id}`,
    changed: () => ({ name: 'Acme Learning', kind: 'partner' }),
  },
  {
    stage: 2,
    argv: ['org', 'suspend', 'Acme Learning', '--yes'],
    action: 'organisation.suspend',
    target: (d) => `organisation:${d.organisation.id}`,
    changed: () => ({ organisation: 'Acme Learning', status: { from: 'active', to: 'suspended' } }),
  },
  {
    stage: 3,
    argv: ['org', 'reinstate', 'Acme Learning'],
    action: 'organisation.reinstate',
    target: (d) => `organisation:${d.organisation.id}`,
    changed: () => ({ organisation: 'Acme Learning', status: { from: 'suspended', to: 'active' } }),
  },
  {
    stage: 2,
    argv: [
      'agreement',
      'record',
      '--org',
      'Acme Learning',
      '--signed',
      '2026-01-31',
      '--document',
      'DSA-2026-014',
      '--purpose',
      'Reading practice',
    ],
    action: 'agreement.record',
    target: (d) => `organisation:${d.agreement.organisationId}`,
    changed: (d) => ({
      organisation: 'Acme Learning',
      agreementId: d.agreement.id,
      document: 'DSA-2026-014',
      signed: '2026-01-31T00:00:00.000Z',
      expires: null,
      purpose: 'Reading practice',
      data: 'first_name tier progress',
      dispositionDays: 30,
    }),
  },
  {
    // Its disposition at once, its period not over (it ended in stage 3): --yes, there is no terminal.
    stage: 5,
    argv: ['agreement', 'dispose', '--org', 'Acme Learning', '--now', '--yes'],
    action: 'agreement.dispose',
    target: (d) => `organisation:${d.organisationId}`,
    changed: (d) => ({ agreementId: d.agreementId, documentRef: 'DSA-2026-014', early: true }),
  },
  {
    stage: 6,
    argv: ['agreement', 'certificate', '--org', 'Acme Learning'],
    action: 'agreement.certificate',
    target: (d) => `organisation:${d.certificate.certificate.organisation.id}`,
    changed: () => ({ organisation: 'Acme Learning', document: 'DSA-2026-014', attested: false }),
  },
  {
    stage: 3,
    argv: ['agreement', 'end', '--org', 'Acme Learning', '--yes'],
    action: 'agreement.end',
    target: (d) => `organisation:${d.ended[0].organisationId}`,
    changed: (d) => ({ ended: [{ agreementId: d.ended[0].id, document: 'DSA-2026-014' }] }),
  },
  {
    stage: 2,
    argv: ['key', 'create', '--org', 'Acme Learning', '--name', 'production', '--scopes', 'students:read'],
    action: 'key.create',
    target: (d) => `key:${d.id}`,
    changed: (d) => ({
      organisation: 'Acme Learning',
      name: 'production',
      prefix: d.displayPrefix,
      scopes: 'students:read',
      expires: null,
    }),
    secrets: async (d, secrets) => {
      secrets.values.push(d.key, hashApiKey(d.key), d.key.slice(d.displayPrefix.length))
    },
  },
  {
    stage: 3,
    argv: ['key', 'roll', 'production-prefix', '--overlap', '24h'],
    action: 'key.roll',
    target: (d) => `key:${d.replaces.id}`,
    changed: (d) => ({ name: 'production', prefix: d.replaces.displayPrefix, replacedBy: d.displayPrefix }),
    secrets: async (d, secrets) => {
      secrets.values.push(d.key, hashApiKey(d.key), d.key.slice(d.displayPrefix.length))
    },
  },
  {
    // The rolled key, still in force until its overlap ends.
    stage: 4,
    argv: ['key', 'revoke', 'production-prefix'],
    action: 'key.revoke',
    target: (d) => `key:${d.key.id}`,
    changed: (d) => ({ name: 'production', prefix: d.key.displayPrefix, alreadyRevoked: false }),
  },
  {
    stage: 1,
    argv: ['students', 'import', 'students.csv'],
    action: 'students.import',
    target: () => 'students',
    changed: () => ({ file: 'students.csv', format: 'csv', rows: 2, total: 2, complete: true }),
  },
  {
    stage: 2,
    argv: ['links', 'import', 'links.csv'],
    action: 'links.import',
    target: () => 'links',
    changed: () => ({ file: 'links.csv', format: 'csv', rows: 2, total: 2, complete: true }),
  },
  {
    stage: 2,
    argv: ['progress', 'import', 'progress.csv'],
    action: 'progress.import',
    target: () => 'progress',
    changed: () => ({ file: 'progress.csv', format: 'csv', rows: 1, total: 1, complete: true }),
  },
  {
    stage: 2,
    argv: ['disclosures', 'report', '--student', ADA, '--output', 'report.csv'],
    action: 'disclosures.report',
    target: () => `student:${ADA}`,
    changed: () => ({ student: ADA, format: 'csv', output: 'report.csv' }),
  },
  {
    stage: 3,
    argv: [
      'disclosures',
      'export',
      '--since',
      '2026-01-01',
      '--until',
      '2026-02-01',
      '--org',
      'Acme Learning',
      '--format',
      'json',
      '--output',
      'export.json',
    ],
    action: 'disclosures.export',
    target: () => 'disclosures',
    changed: () => ({
      since: '2026-01-01T00:00:00.000Z',
      until: '2026-02-01T00:00:00.000Z',
      organisation: 'Acme Learning',
      format: 'json',
      output: 'export.json',
    }),
  },
  {
    stage: 3,
    argv: ['links', 'remove', '--org', 'Acme Learning', '--student', ADA, '--yes'],
    action: 'links.remove',
    target: () => `student:${ADA}`,
    changed: (d) => ({ organisation: 'Acme Learning', organisationId: d.organisation.id, unlinked: true }),
  },
  {
    stage: 1,
    argv: ['schools', 'add', '--name', 'Hillside Primary'],
    action: 'schools.add',
    target: (d) => `school:${d.school.id}`,
    changed: () => ({ name: 'Hillside Primary', identifier: null }),
  },
  {
    stage: 2,
    argv: ['schools', 'members', 'import', 'members.csv'],
    action: 'schools.members.import',
    target: () => 'schools',
    changed: () => ({ file: 'members.csv', format: 'csv', rows: 2, total: 2, complete: true }),
  },
  {
    stage: 3,
    argv: ['links', 'add', '--org', 'Acme Learning', '--school', 'Hillside Primary'],
    action: 'links.add',
    target: (d) => `share:${d.share.id}`,
    changed: (d) => ({ organisationId: d.organisation.id, kind: 'school', label: 'Hillside Primary' }),
  },
  {
    stage: 4,
    argv: ['links', 'add', '--org', 'Acme Learning', '--file', 'club.csv'],
    action: 'links.add',
    target: (d) => `share:${d.share.id}`,
    changed: (d) => ({ organisationId: d.organisation.id, kind: 'list', label: 'club.csv', students: 1 }),
  },
  {
    stage: 4,
    argv: ['links', 'remove', '--org', 'Acme Learning', '--school', 'Hillside Primary', '--yes'],
    action: 'links.remove',
    target: (d) => `share:${d.shareId}`,
    changed: (d) => ({ organisationId: d.organisation.id, school: 'Hillside Primary', schoolId: d.school.id }),
  },
  {
    stage: 3,
    argv: ['students', 'erase', BEN, '--yes'],
    action: 'students.erase',
    target: () => `student:${BEN}`,
    changed: () => ({ progress: 0 }),
  },
  {
    stage: 3,
    argv: ['backup', 'backup.db'],
    action: 'database.backup',
    target: () => 'database',
    changed: (d) => ({ file: d.file }),
  },
  {
    stage: 1,
    argv: ['operator', 'create', '--email', 'ops@example.org'],
    action: 'operator.create',
    target: (d) => `account:${d.account.id}`,
    changed: () => ({ email: 'ops@example.org', passwordGenerated: true }),
    secrets: async (d, secrets, databaseUrl) => {
      secrets.values.push(d.password, await passwordHash(databaseUrl, 'ops@example.org'))
    },
  },
  {
    stage: 2,
    argv: ['operator', 'create', '--email', 'second@example.org', '--password-stdin'],
    input: STDIN_PASSWORD,
    action: 'operator.create',
    target: (d) => `account:${d.account.id}`,
    changed: () => ({ email: 'second@example.org', passwordGenerated: false }),
    secrets: async (_d, secrets, databaseUrl) => {
      secrets.values.push(STDIN_PASSWORD, await passwordHash(databaseUrl, 'second@example.org'))
    },
  },
  {
    stage: 3,
    argv: ['operator', 'reset-2fa', '--email', 'second@example.org'],
    action: 'operator.reset-2fa',
    target: (d) => `account:${d.account.id}`,
    changed: () => ({ email: 'second@example.org', factorRemoved: false, sessionsEnded: 0 }),
  },
  {
    stage: 1,
    argv: ['lti', 'key', 'rotate'],
    action: 'lti.key.rotate',
    target: () => 'lti-tool-key',
    changed: (d) => ({ retired: d.key.retired, current: d.key.current }),
  },
  {
    stage: 1,
    argv: ['mail', 'test', '--to', 'ops@example.org'],
    action: 'mail.test',
    target: (d) => `mail:${d.mail.id}`,
    changed: () => ({ to: 'ops@example.org' }),
  },
]

/**
 * Changing commands whose row the run above cannot read back: `restore` replaces the database
 * the others write to, so test/cli/backup.test.ts checks its row, in the restored database.
 */
const AUDITED_ELSEWHERE = new Map([['restore', 'database.restore']])

/** Commands that only read: run on a database holding one of everything. */
const READ_ONLY: string[][] = [
  ['catalog', 'validate', CATALOG_DIR],
  ['org', 'list'],
  ['agreement', 'list'],
  ['key', 'list'],
  ['disclosures'],
  ['schools', 'list'],
  ['links', 'shares', '--org', 'Acme Learning'],
  ['agreement', 'ended'],
  ['operator', 'list'],
  ['lti', 'registrations'],
]

/**
 * Commands that write a file of the catalog folder and touch no database, so they are no operator
 * action on the service and leave no row, like the read-only ones: `catalog case-import` writes a
 * framework's CASE map, which reaches the service only through `catalog import`, audited.
 */
function filesOnly(): string[][] {
  const catalog = path.join(tempDir(), 'catalog')
  fs.cpSync(CATALOG_DIR, catalog, { recursive: true })
  return [['catalog', 'case-import', CASE_PACKAGE, catalog, '--framework', 'csta']]
}

/**
 * Commands that touch no database and run until interrupted, so they are placed but not run here:
 * `lti demo-platform` serves the demo learning platform (test/cli/lti-demo-platform.test.ts runs it).
 */
const SERVES_UNTIL_STOPPED: string[][] = [['lti', 'demo-platform']]

async function passwordHash(databaseUrl: string, email: string): Promise<string> {
  return withStorage(databaseUrl, async ({ db }) =>
    (
      await db.selectFrom('accounts').select('password_hash').where('email', '=', email).executeTakeFirstOrThrow()
    ).password_hash.toString(),
  )
}

function auditRows(databaseUrl: string): Promise<AuditRow[]> {
  return withStorage(databaseUrl, ({ db }) => db.selectFrom('audit_log').selectAll().orderBy('id').execute())
}

/** Every command that does work, groups that do some too (`disclosures`) included. */
function leafCommands(command: Command, prefix: string[] = []): { path: string[]; command: Command }[] {
  return command.commands.flatMap((sub) => [
    ...(doesWork(sub) ? [{ path: [...prefix, sub.name()], command: sub }] : []),
    ...leafCommands(sub, [...prefix, sub.name()]),
  ])
}

const LEAVES = leafCommands(buildProgram({ json: false }))

/** The command's own words at the start of `argv`: `org suspend` of `org suspend Acme`. */
function commandWords(argv: readonly string[]): string {
  const leaf = LEAVES.filter(({ path }) => path.every((word, index) => argv[index] === word)).sort(
    (a, b) => b.path.length - a.path.length,
  )[0]
  if (leaf === undefined) throw new Error(`no command ${argv.join(' ')}`)
  return leaf.path.join(' ')
}

describe('the audit log of the command line', () => {
  it('places every command: changing ones declare the action this file checks, read-only ones none', () => {
    const changing = new Map([...CHANGING.map((c) => [commandWords(c.argv), c.action] as const), ...AUDITED_ELSEWHERE])
    const readOnly = new Set([...READ_ONLY, ...filesOnly(), ...SERVES_UNTIL_STOPPED].map(commandWords))
    for (const { path, command } of LEAVES) {
      const name = path.join(' ')
      expect(changing.has(name) !== readOnly.has(name), `${name} is in exactly one table`).toBe(true)
      expect(auditedAction(command), name).toBe(changing.get(name))
      expect(
        command.options.some((option) => option.long === '--actor'),
        name,
      ).toBe(changing.has(name))
    }
  })

  it('records each changing command once, with the operating-system user, its arguments and what it changed, and no secret', async () => {
    const databaseUrl = newDatabaseUrl()
    const dir = tempDir()
    fs.writeFileSync(path.join(dir, 'students.csv'), STUDENTS_CSV)
    fs.writeFileSync(path.join(dir, 'links.csv'), LINKS_CSV)
    fs.writeFileSync(path.join(dir, 'progress.csv'), PROGRESS_CSV)
    fs.writeFileSync(path.join(dir, 'members.csv'), MEMBERS_CSV)
    fs.writeFileSync(path.join(dir, 'club.csv'), CLUB_CSV)
    fs.mkdirSync(path.join(dir, 'roster'))
    writeFolder(ROSTER_FILES, path.join(dir, 'roster'))
    const secrets: Secrets = { values: [] }
    let prefix = ''
    let seen = (await auditRows(databaseUrl)).length
    expect(seen).toBe(0)

    for (const stage of [1, 2, 3, 4, 5, 6]) {
      const cases = CHANGING.filter((c) => c.stage === stage)
      const runs = await Promise.all(
        cases.map(async (c) => {
          const argv = c.argv.map((word) => (word === 'production-prefix' ? prefix : word))
          const result: CliResult = await cli([...argv, '--json'], {
            databaseUrl,
            cwd: dir,
            ...(c.input === undefined ? {} : { input: c.input }),
          })
          expect(result.status, `${argv.join(' ')}: ${result.stdout}${result.stderr}`).toBe(0)
          return { c, argv, document: jsonOf(result) }
        }),
      )
      const rows = (await auditRows(databaseUrl)).slice(seen)
      expect(rows, `stage ${stage} writes one row per command`).toHaveLength(cases.length)
      seen += rows.length
      for (const { c, argv, document } of runs) {
        const name = argv.join(' ')
        if (c.action === 'key.create') prefix = document.displayPrefix
        await c.secrets?.(document, secrets, databaseUrl)
        const words = commandWords(argv)
        const args = [...argv.slice(words.split(' ').length), '--json']
        const mine = rows.filter((row) => {
          const detail = JSON.parse(row.detail)
          return detail.command === words && JSON.stringify(detail.arguments) === JSON.stringify(args)
        })
        expect(mine, name).toHaveLength(1)
        const row = mine[0]!
        expect({ actor: row.actor, action: row.action, target: row.target }, name).toEqual({
          actor: `cli:${OS_USER}`,
          action: c.action,
          target: c.target(document),
        })
        expect(JSON.parse(row.detail), name).toEqual({
          command: words,
          arguments: args,
          osUser: OS_USER,
          changed: expect.objectContaining(c.changed(document)),
        })
      }
    }

    const stored = JSON.stringify(await auditRows(databaseUrl))
    expect(secrets.values).toHaveLength(10)
    for (const secret of secrets.values) expect(stored).not.toContain(secret)
  })

  it('writes nothing for read-only commands, nor for a change that failed', async () => {
    const databaseUrl = newDatabaseUrl()
    const run = (...argv: string[]) => cli([...argv, '--json'], { databaseUrl })
    // One of everything the listings show, made directly.
    await withStorage(databaseUrl, async ({ db }) => {
      const acme = await createOrganisation(db, 'Acme Learning', Date.now())
      await createApiKey(db, { organisationId: acme.id, name: 'k', scopes: [], expiresAt: null }, Date.now())
      await recordAgreement(
        db,
        { organisationId: acme.id, signedAt: Date.parse('2026-01-31'), expiresAt: null, documentRef: 'D' },
        Date.now(),
      )
      await recordAudit(db, { actor: 'cli:someone', action: 'organisation.create', target: 'x' }, Date.now())
    })
    const before = await auditRows(databaseUrl)
    expect(before).toHaveLength(1)

    const quiet = [...READ_ONLY, ...filesOnly()]
    const results = await Promise.all(quiet.map((argv) => run(...argv)))
    for (const [index, result] of results.entries()) expect(result.status, quiet[index]!.join(' ')).toBe(0)
    // Refused: nothing changed, so nothing is recorded (the row is in the change's transaction).
    const taken = path.join(tempDir(), 'taken.csv')
    fs.writeFileSync(taken, 'not a report')
    const failed = await Promise.all([
      run('org', 'create', '--name', 'Acme Learning'),
      run('key', 'revoke', 'cur_live_nothing'),
      run('disclosures', 'report', '--student', ADA, '--output', taken),
      run(
        'disclosures',
        'export',
        '--since',
        '2026-01-01',
        '--until',
        '2026-02-01',
        '--org',
        'Nobody Ltd',
        '--output',
        path.join(tempDir(), 'none.csv'),
      ),
      run('agreement', 'record', '--org', 'Nobody Ltd', '--signed', '2026-01-31', '--document', 'D', '--purpose', 'p'),
    ])
    expect(failed.map((result) => result.status)).toEqual([1, 1, 1, 1, 1])
    expect(fs.readFileSync(taken, 'utf8')).toBe('not a report')
    expect(await auditRows(databaseUrl)).toEqual(before)
  })

  it('names the sudo user or --actor instead, and keeps the operating-system user beside it', async () => {
    const databaseUrl = newDatabaseUrl()
    const create = (name: string, extra: string[], env?: Record<string, string>) =>
      cli(['org', 'create', '--name', name, ...extra, '--json'], { databaseUrl, ...(env ? { env } : {}) })
    const results = [
      await create('Sudo Ltd', [], { SUDO_USER: 'alice' }),
      await create('Robot Ltd', ['--actor', ' deploy-bot '], { SUDO_USER: 'alice' }),
      await create('Plain Ltd', []),
    ]
    expect(results.map((result) => result.status)).toEqual([0, 0, 0])
    const rows = await auditRows(databaseUrl)
    expect(rows.map((row) => [row.actor, JSON.parse(row.detail).osUser])).toEqual([
      ['cli:alice', OS_USER],
      ['cli:deploy-bot', OS_USER],
      [`cli:${OS_USER}`, OS_USER],
    ])

    const [empty, control] = await Promise.all([
      create('Nobody Ltd', ['--actor', '  ']),
      create('Nobody Ltd', ['--actor', 'ops\nforged line']),
    ])
    for (const refused of [empty, control]) {
      expect(refused.status).toBe(2)
      expect(jsonOf(refused).error.message).toMatch(/--actor <name>.*1 to 100 printable characters/s)
    }
    expect(await auditRows(databaseUrl)).toHaveLength(3)
  })

  it('names a user without an entry in the user database by its uid', () => {
    // A container may run the command under a uid no /etc/passwd names; userInfo() throws then.
    const unnamed = () => {
      throw Object.assign(new Error('uv_os_get_passwd returned ENOENT'), { code: 'ERR_SYSTEM_ERROR' })
    }
    expect(osUser({ userInfo: unnamed, getuid: () => 54_321 })).toBe('uid:54321')
    expect(osUser({ userInfo: unnamed, getuid: undefined })).toBe('unknown')
    expect(osUser()).toBe(os.userInfo().username)
  })

  it('masks a key pasted into an argument, and the value of an option named for a secret', async () => {
    const databaseUrl = newDatabaseUrl()
    const pasted = 'cur_live_0123456789abcdefghijABCDEFGHIJ01234567'
    expect(jsonOf(await cli(['org', 'create', '--name', 'Acme Learning', '--json'], { databaseUrl })).ok).toBe(true)
    const made = await cli(['key', 'create', '--org', 'Acme Learning', '--name', `oops ${pasted}`, '--json'], {
      databaseUrl,
    })
    expect(made.status).toBe(0)
    const row = (await auditRows(databaseUrl)).at(-1)!
    expect(JSON.stringify(row)).not.toContain(pasted)
    const detail = JSON.parse(row.detail)
    expect(detail.arguments).toEqual(['--org', 'Acme Learning', '--name', 'oops [redacted API key]', '--json'])
    expect(detail.changed.name).toBe('oops [redacted API key]')

    // No command takes a secret on its command line today; one that did would be masked.
    const program = new Command('curriculum')
    const leaf = program.command('thing').option('--webhook-secret <value>').option('--password-stdin')
    expect(
      auditedArguments(leaf, ['thing', '--webhook-secret', 's3cret', '--webhook-secret=s3cret', '--password-stdin']),
    ).toEqual(['--webhook-secret', '[redacted]', '--webhook-secret=[redacted]', '--password-stdin'])
  })
})

describe('the audit row of an import', () => {
  /** Runs a 600-row student import in process, its writes and recorder shaped by the test. */
  async function importStudents(options: {
    failWriteCall?: number
    failRecord?: (change: ImportChange) => boolean
  }): Promise<{ error: unknown; stored: number; audit: ImportChange[] }> {
    const databaseUrl = newDatabaseUrl()
    const dir = tempDir()
    const file = path.join(dir, 'students.csv')
    const ids = Array.from({ length: 600 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`)
    fs.writeFileSync(file, `id,firstName,tier\n${ids.map((id) => `${id},Ada,explorer`).join('\n')}\n`)
    let writes = 0
    const spec = {
      ...studentImport,
      write: async (...args: Parameters<typeof studentImport.write>) => {
        if (++writes === options.failWriteCall) throw new Error('disk full')
        return studentImport.write(...args)
      },
    }
    return withStorage(databaseUrl, async (storage) => {
      let error: unknown
      try {
        await runRecordImport(spec, storage, {
          file,
          format: 'csv',
          now: Date.now(),
          record: async (db, change) => {
            if (options.failRecord?.(change)) throw new Error('audit log unavailable')
            await recordAudit(
              db,
              { actor: 'cli:test', action: 'students.import', target: 'students', detail: { ...change } },
              0,
            )
          },
        })
      } catch (caught) {
        error = caught
      }
      const stored = await rowCount(storage.db, 'students')
      const rows = await storage.db.selectFrom('audit_log').select('detail').orderBy('id').execute()
      return { error, stored, audit: rows.map((row) => JSON.parse(row.detail) as ImportChange) }
    })
  }

  it('commits with the last batch: a complete import is recorded once', async () => {
    const { error, stored, audit } = await importStudents({})
    expect(error).toBeUndefined()
    expect(stored).toBe(600)
    expect(audit).toEqual([{ file: expect.any(String), format: 'csv', rows: 600, total: 600, complete: true }])
  })

  it('records what was written when writing stopped part-way', async () => {
    const { error, stored, audit } = await importStudents({ failWriteCall: 2 })
    expect(String(error)).toMatch(/writing stopped after 500 of 600 rows \(disk full\)/)
    expect(stored).toBe(500)
    expect(audit).toEqual([{ file: expect.any(String), format: 'csv', rows: 500, total: 600, complete: false }])
  })

  it('keeps the last batch back when its audit row cannot be written, and records what was written', async () => {
    const { error, stored, audit } = await importStudents({ failRecord: (change) => change.complete })
    expect(String(error)).toMatch(/writing stopped after \d+ of 600 rows \(audit log unavailable\)/)
    expect(stored).toBeGreaterThanOrEqual(500)
    expect(stored).toBeLessThan(600)
    expect(audit).toEqual([{ file: expect.any(String), format: 'csv', rows: stored, total: 600, complete: false }])
  })
})
