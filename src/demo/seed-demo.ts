/**
 * Demo data for a first start on an empty database: the sample catalog, one demo partner
 * organisation with an agreement, made-up students with progress (shared with it by a list
 * share), and two keys, printed once.
 * Everything is named "demo" so nobody mistakes it for real data. A database that holds
 * anything already is left alone.
 */
import { randomBytes } from 'node:crypto'
import type { Kysely } from 'kysely'
import { formatProblem, readCatalogDir } from '../catalog/catalog-files.js'
import type { TierId } from '../domain/tiers.js'
import { hashPassword } from '../domain/passwords.js'
import { ConflictError } from '../domain/errors.js'
import { createApiKey, createOrganisation } from '../storage/access-repository.js'
import { recordAgreement } from '../cases/agreement-record.js'
import { createAccount } from '../storage/account-repository.js'
import { replaceCatalog } from '../storage/catalog-repository.js'
import type { Database } from '../storage/tables.js'
import { isEmptyDatabase } from '../storage/meta-repository.js'
import { inTransaction } from '../storage/transaction.js'
import { importShares, linkStudents, upsertProgress, upsertStudents } from '../storage/student-import-repository.js'
import { syntheticProgress, syntheticStudents } from '../cases/synthetic-students.js'
import { beginTotpEnrolment, confirmTotpEnrolment, secondFactorKey } from '../cases/second-factor.js'
import { totpCode, totpStep } from '../domain/totp.js'
import { EXAMPLE_VARIABLES } from '../http/code-examples.js'

export const DEMO_ORGANISATION = 'Demo Partner (demo data)'

export const DEMO_OPERATOR_EMAIL = 'operator@demo.example'

export interface DemoSeed {
  organisationId: string
  catalogKey: string
  studentKey: string
  /**
   * A demo operator login for the dashboard, shown once: the password, and the authenticator's
   * secret and URI (operators need two-step sign-in) for an app or `oathtool --totp -b`.
   */
  operator: { email: string; password: string; totpSecret: string; totpUri: string }
  students: { id: string; firstName: string; tier: TierId }[]
}

const DAY = 86_400_000

/**
 * Seeds the demo when the database is empty; returns undefined when it was not (or when
 * another instance seeded it first).
 */
export async function seedDemoIfEmpty(
  db: Kysely<Database>,
  catalogDir: string,
  now: number,
): Promise<DemoSeed | undefined> {
  const read = readCatalogDir(catalogDir)
  if (!read.ok) throw new Error(`the sample catalog is invalid:\n${read.problems.map(formatProblem).join('\n')}`)
  try {
    // One transaction: a crash half-way leaves the database empty, to be seeded next start.
    return await inTransaction(db, async (trx) => {
      if (!(await isEmptyDatabase(trx))) return undefined
      const organisation = await createOrganisation(trx, DEMO_ORGANISATION, now)
      await replaceCatalog(trx, read.catalog)
      await recordAgreement(
        trx,
        {
          organisationId: organisation.id,
          signedAt: now - DAY,
          expiresAt: now + 365 * DAY,
          documentRef: 'DEMO-DSA-0001 (demo agreement)',
          purpose: 'Demo: show each learner their progress and next lesson in the partner app',
          dataCategories: ['first_name', 'tier', 'progress'],
          dispositionDays: 30,
        },
        now,
      )
      const students = syntheticStudents()
      await upsertStudents(trx, students, now - 30 * DAY)
      await linkStudents(
        trx,
        students.map((student) => ({ studentId: student.id, organisationId: organisation.id })),
        now,
        undefined,
        importShares('Demo students (demo data)', 'demo'),
      )
      await upsertProgress(trx, syntheticProgress(read.catalog.lessons, students, now), now)
      const catalogKey = await createApiKey(
        trx,
        { organisationId: organisation.id, name: 'demo catalog key', scopes: [], expiresAt: null },
        now,
      )
      const studentKey = await createApiKey(
        trx,
        {
          organisationId: organisation.id,
          name: 'demo student key',
          scopes: ['students:read', 'students:write'],
          expiresAt: null,
        },
        now,
      )
      const password = randomBytes(12).toString('base64url')
      const account = await createAccount(
        trx,
        { email: DEMO_OPERATOR_EMAIL, passwordHash: await hashPassword(password), role: 'operator' },
        now,
      )
      const store = { db: trx, key: await secondFactorKey(trx) }
      const totp = await beginTotpEnrolment(store, account, now)
      // Confirmed with the previous step's code, so the code an app shows now is still unused.
      await confirmTotpEnrolment(store, account, totpCode(totp.secret, totpStep(now) - 1), now)
      return {
        organisationId: organisation.id,
        catalogKey: catalogKey.key,
        studentKey: studentKey.key,
        students,
        operator: { email: DEMO_OPERATOR_EMAIL, password, totpSecret: totp.secret, totpUri: totp.uri },
      }
    })
  } catch (error) {
    // Another instance seeded at the same moment and won the race (unique organisation name).
    if (error instanceof ConflictError || (error as { code?: string }).code === '23505') return undefined
    throw error
  }
}

/** The shell line that sets the variables every example reads (EXAMPLE_VARIABLES) to the demo's values. */
export function demoExports(seed: DemoSeed, baseUrl: string): string {
  const values = { baseUrl, apiKey: seed.studentKey, studentId: seed.students[0]!.id }
  const names = Object.entries(EXAMPLE_VARIABLES) as [keyof typeof values, string][]
  return `export ${names.map(([variable, name]) => `${name}=${values[variable]}`).join(' ')}`
}

/** `apiUrl` is where the API's routes start (the service's address and its prefix). */
export function demoBanner(seed: DemoSeed, baseUrl: string, apiUrl: string): string {
  const student = seed.students[0]!
  const rule = '='.repeat(72)
  return [
    rule,
    ' DEMO DATA - created on this first start because the database was empty.',
    ' These demo keys are shown once; only their hashes are stored.',
    rule,
    // API_KEY's key can run every example (any key reads the catalog); the catalog key shows a key without scopes.
    ` Demo student key (students:read, students:write; reads the catalog too), the API_KEY below:`,
    `   ${seed.studentKey}`,
    ` Demo catalog key (no scopes: the catalog only):`,
    `   ${seed.catalogKey}`,
    ` Demo student: ${student.firstName} (${student.tier}), id ${student.id}`,
    '',
    ' Paste this line, then every example of the README, docs/ and /docs runs as it stands:',
    `   ${demoExports(seed, baseUrl)}`,
    '',
    ' Try:',
    `   curl -H 'Authorization: Bearer ${seed.catalogKey}' \\`,
    `     ${apiUrl}/tiers`,
    `   curl -H 'Authorization: Bearer ${seed.studentKey}' \\`,
    `     ${apiUrl}/students/${student.id}/progress`,
    ` API reference: ${baseUrl}/docs`,
    '',
    ` Dashboard: ${baseUrl}/dashboard`,
    ` Demo operator login: ${seed.operator.email}`,
    ` Demo operator password (shown once): ${seed.operator.password}`,
    ` Demo operator two-step sign-in key (shown once): ${seed.operator.totpSecret}`,
    `   add it to an authenticator app, or: oathtool --totp -b ${seed.operator.totpSecret}`,
    `   ${seed.operator.totpUri}`,
    rule,
  ].join('\n')
}
