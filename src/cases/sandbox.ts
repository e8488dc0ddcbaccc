/**
 * A partner's sandbox: an organisation of kind `sandbox` holding synthetic students with
 * progress, reached only by the partner's test keys. No real child's data is ever in it, so
 * it needs no agreement and exists from the partner's first sign-in.
 */
import { createHash, randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import { syntheticProgress, syntheticStudents } from './synthetic-students.js'
import { createApiKey, createOrganisation } from '../storage/access-repository.js'
import { setSandboxIfNone } from '../storage/account-repository.js'
import type { AccountRow, ApiKeyRow, Database, OrganisationRow } from '../storage/tables.js'
import { insertSandboxStudents, lessonOutlines } from '../storage/sandbox-repository.js'
import { recordStudentChanges } from '../storage/student-change-log.js'
import { linkStudents, storedStudents, upsertProgress } from '../storage/student-import-repository.js'
import { inTransaction } from '../storage/transaction.js'

/** Organisation names are limited to 120 characters (see createOrganisation). */
const NAME_LIMIT = 120
const PREFIX = 'Sandbox: '

/**
 * The sandbox's organisation name: `Sandbox: <e-mail>` when that fits in the 120 characters an
 * organisation name may have. A valid address can have 254 (RFC 5321), so a longer one keeps its
 * head and gains a digest of the whole address: still readable, still unique (names are unique,
 * and two long addresses may share their first 90 characters).
 *
 * @example sandboxName('dev@acme.example') // 'Sandbox: dev@acme.example'
 */
export function sandboxName(label: string): string {
  const plain = `${PREFIX}${label}`
  if (plain.length <= NAME_LIMIT) return plain
  const digest = createHash('sha256').update(label).digest('hex').slice(0, 16)
  const tail = `… #${digest}`
  return `${PREFIX}${label.slice(0, NAME_LIMIT - PREFIX.length - tail.length)}${tail}`
}

/** Attempts at drawing an unused id before giving up (a random UUID repeats essentially never). */
const ID_ATTEMPTS = 10

/**
 * An id no stored student has. A sandbox student must never share an id with a real child:
 * the row would be one and the same, and a test key would reach a real child's data.
 */
async function unusedStudentId(db: Kysely<Database>, newId: () => string, taken: Set<string>): Promise<string> {
  for (let attempt = 0; attempt < ID_ATTEMPTS; attempt++) {
    const id = newId()
    if (!taken.has(id) && (await storedStudents(db, [id])).size === 0) {
      taken.add(id)
      return id
    }
  }
  throw new Error(`no unused student id after ${ID_ATTEMPTS} attempts`)
}

/**
 * Creates a partner's sandbox organisation with eight synthetic students. Their rows are
 * inserted, never upserted: an id that some student already has fails the insert instead of
 * overwriting that student. `newId` is for tests; otherwise random UUIDs.
 */
export async function createSandbox(
  db: Kysely<Database>,
  label: string,
  now: number,
  newId: () => string = randomUUID,
): Promise<OrganisationRow> {
  return inTransaction(db, async (trx) => {
    const organisation = await createOrganisation(trx, sandboxName(label), now, { kind: 'sandbox' })
    const lessons = await lessonOutlines(trx)
    const taken = new Set<string>()
    const ids: string[] = []
    for (let i = 0; i < 8; i++) ids.push(await unusedStudentId(trx, newId, taken))
    const students = syntheticStudents(ids.length, () => ids.shift()!)
    // Their tiers logged as changes, so a test key reading the change feed from the beginning sees
    // them, as a live key sees imported students.
    const at = isoAt(now)
    await insertSandboxStudents(trx, students, at)
    await recordStudentChanges(
      trx,
      students.map((student) => ({ type: 'tier_changed', studentId: student.id, tier: student.tier, changedAt: at })),
    )
    await linkStudents(
      trx,
      students.map((student) => ({ studentId: student.id, organisationId: organisation.id })),
      now,
    )
    await upsertProgress(trx, syntheticProgress(lessons, students, now, now % 1000), now)
    return organisation
  })
}

/**
 * A partner's sandbox and first test key, made when the partner first signs in (sign-up only
 * creates the account, so that it answers the same whether or not the address had one). Undefined
 * if the account has a sandbox already, e.g. made by a concurrent sign-in: nothing is created then.
 */
export async function provideSandbox(
  db: Kysely<Database>,
  account: AccountRow,
  now: number,
): Promise<{ row: ApiKeyRow; key: string } | undefined> {
  if (account.sandbox_organisation_id !== null) return undefined
  const taken = new Error('sandbox exists')
  try {
    const created = await inTransaction(db, async (trx) => {
      const sandbox = await createSandbox(trx, account.email, now)
      if (!(await setSandboxIfNone(trx, account.id, sandbox.id))) throw taken
      return createApiKey(
        trx,
        {
          organisationId: sandbox.id,
          name: 'first test key',
          scopes: ['students:read', 'students:write'],
          expiresAt: null,
          mode: 'test',
          createdBy: account.id,
        },
        now,
      )
    })
    account.sandbox_organisation_id = created.row.organisation_id
    return created
  } catch (error) {
    if (error === taken) return undefined
    throw error
  }
}
