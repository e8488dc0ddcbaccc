/**
 * LTI registrations (docs/lti.md): a platform registered dynamically (through a registration URL
 * an operator made for an organisation) or by hand waits, pending, until an operator activates
 * it; only an active registration's launches are accepted and its scores sent.
 *
 * A registration belongs to a partner organisation, which owns the students its launches make:
 * activation makes the list share that links them to it (cases/lti-students.ts puts each new
 * student in it), and with a school, the students attend that school so its shares follow them.
 * Every change writes its audit row in its transaction.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { type Clock, isoAt } from '../clock.js'
import { displayNameProblem } from '../domain/display-names.js'
import { ConflictError, NotFoundError } from '../domain/errors.js'
import { organisationById } from '../storage/access-repository.js'
import {
  insertDeployments,
  insertRegistration,
  insertRegistrationLink,
  registrationById,
  registrationLinkByTokenHash,
  removeDeployment,
  revokeRegistrationLink,
  setRegistrationStatus,
} from '../storage/lti-registration-repository.js'
import { schoolById } from '../storage/school-repository.js'
import { insertShare } from '../storage/share-repository.js'
import type { Database, LtiRegistrationLinkRow, LtiRegistrationRow, OrganisationRow } from '../storage/tables.js'
import { inTransaction } from '../storage/transaction.js'
import { auditOperator, type OperatorAudit } from './operator-action.js'

type Db = Kysely<Database>

/** SHA-256 (hex) of a registration URL's token: what is stored. */
export function registrationTokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

async function partnerOrganisation(db: Db, id: string): Promise<OrganisationRow> {
  const organisation = await organisationById(db, id)
  if (organisation === undefined) throw new NotFoundError(`no organisation ${id}`)
  if (organisation.kind === 'sandbox')
    throw new ConflictError(`"${organisation.name}" is a sandbox organisation; LTI students are real children`)
  return organisation
}

export interface RegistrationLink {
  row: LtiRegistrationLinkRow
  /** The token of the URL `/lti/register/<token>`, shown once: only its hash is kept. */
  token: string
}

/** Makes an organisation's dynamic registration URL (a school optional). Audited as `lti.link.create`. */
export async function createRegistrationLink(
  db: Db,
  request: { organisationId: string; schoolId: string | null },
  audit: OperatorAudit,
  clock: Clock,
): Promise<RegistrationLink> {
  return inTransaction(db, async (trx) => {
    const organisation = await partnerOrganisation(trx, request.organisationId)
    if (request.schoolId !== null && (await schoolById(trx, request.schoolId)) === undefined)
      throw new NotFoundError(`no school ${request.schoolId}`)
    const now = clock.now()
    const token = randomBytes(32).toString('base64url')
    const row: LtiRegistrationLinkRow = {
      id: randomUUID(),
      organisation_id: organisation.id,
      school_id: request.schoolId,
      token_hash: registrationTokenHash(token),
      created_at: isoAt(now),
      created_by: audit.actor,
      revoked_at: null,
    }
    await insertRegistrationLink(trx, row)
    const detail = { organisation: organisation.name, organisationId: organisation.id, schoolId: request.schoolId }
    await auditOperator(trx, audit, { action: 'lti.link.create', target: `lti-link:${row.id}`, detail }, now)
    return { row, token }
  })
}

/** The registration URL's link when its token is one in force; undefined otherwise. */
export async function registrationLinkInForce(db: Db, token: string): Promise<LtiRegistrationLinkRow | undefined> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return undefined
  const link = await registrationLinkByTokenHash(db, registrationTokenHash(token))
  return link?.revoked_at === null ? link : undefined
}

export async function revokeLink(db: Db, id: string, audit: OperatorAudit, clock: Clock): Promise<void> {
  await inTransaction(db, async (trx) => {
    const now = clock.now()
    if (!(await revokeRegistrationLink(trx, id, isoAt(now))))
      throw new NotFoundError(`no registration URL ${id} in force`)
    await auditOperator(trx, audit, { action: 'lti.link.revoke', target: `lti-link:${id}` }, now)
  })
}

/** What a platform told us (dynamic) or an operator typed (manual). */
export interface RegistrationDetails {
  organisationId: string
  schoolId: string | null
  linkId: string | null
  method: 'dynamic' | 'manual'
  name: string
  issuer: string
  clientId: string
  authLoginUrl: string
  tokenUrl: string
  tokenAudience: string | null
  jwksUri: string
  product: string | null
  scopes: readonly string[]
  deploymentIds: readonly string[]
}

/** (issuer, client id) is registered already. */
export class RegistrationExistsError extends ConflictError {
  override name = 'RegistrationExistsError'
  constructor(issuer: string, clientId: string) {
    super(`the platform ${issuer} already has a registration with client id ${clientId}`)
  }
}

/**
 * Records a registration, pending until an operator activates it. `audit` names who: the operator
 * for a manual one, the platform (`lti:<issuer>`) for a dynamic one. Audited as `lti.register`.
 */
export async function recordRegistration(
  db: Db,
  details: RegistrationDetails,
  audit: OperatorAudit,
  clock: Clock,
): Promise<LtiRegistrationRow> {
  const name = details.name.trim().slice(0, 120)
  const problem = displayNameProblem(name)
  if (problem !== null) throw new ConflictError(`the platform's name ${problem}`)
  return inTransaction(db, async (trx) => {
    const organisation = await partnerOrganisation(trx, details.organisationId)
    const now = clock.now()
    const row: LtiRegistrationRow = {
      id: randomUUID(),
      organisation_id: organisation.id,
      school_id: details.schoolId,
      link_id: details.linkId,
      share_id: null,
      method: details.method,
      status: 'pending',
      name,
      issuer: details.issuer,
      client_id: details.clientId,
      auth_login_url: details.authLoginUrl,
      token_url: details.tokenUrl,
      token_audience: details.tokenAudience,
      jwks_uri: details.jwksUri,
      product: details.product,
      scopes: details.scopes.join(' '),
      created_at: isoAt(now),
      created_by: audit.actor,
      activated_at: null,
      activated_by: null,
      deactivated_at: null,
    }
    if (!(await insertRegistration(trx, row))) throw new RegistrationExistsError(details.issuer, details.clientId)
    await insertDeployments(trx, row.id, [...new Set(details.deploymentIds)], row.created_at)
    const detail = {
      organisation: organisation.name,
      organisationId: organisation.id,
      method: row.method,
      issuer: row.issuer,
      clientId: row.client_id,
      deployments: details.deploymentIds.length,
    }
    await auditOperator(trx, audit, { action: 'lti.register', target: `lti-registration:${row.id}`, detail }, now)
    return row
  })
}

async function registrationOrThrow(db: Db, id: string): Promise<LtiRegistrationRow> {
  const registration = await registrationById(db, id)
  if (registration === undefined) throw new NotFoundError(`no LTI registration ${id}`)
  return registration
}

/** Writes the registration's new status if no one changed it meanwhile, with its audit row. */
async function moveRegistration(
  trx: Db,
  registration: LtiRegistrationRow,
  set: Parameters<typeof setRegistrationStatus>[3],
  action: 'lti.activate' | 'lti.deactivate',
  audit: OperatorAudit | undefined,
  now: number,
): Promise<LtiRegistrationRow> {
  const id = registration.id
  if (!(await setRegistrationStatus(trx, id, registration.status, set)))
    throw new ConflictError(`the LTI registration ${id} changed meanwhile; look again`)
  const detail = { issuer: registration.issuer }
  await auditOperator(trx, audit, { action, target: `lti-registration:${id}`, detail }, now)
  return { ...registration, ...set }
}

/**
 * Activates a pending or deactivated registration: its launches are accepted from now on. The
 * first activation makes the list share that links its students to the organisation. Of two
 * racing activations one does it and the other is told it is active already.
 */
export async function activateRegistration(
  db: Db,
  id: string,
  audit: OperatorAudit,
  clock: Clock,
): Promise<LtiRegistrationRow> {
  return inTransaction(db, async (trx) => {
    const registration = await registrationOrThrow(trx, id)
    if (registration.status === 'active') throw new ConflictError(`the LTI registration ${id} is active already`)
    await partnerOrganisation(trx, registration.organisation_id)
    const now = clock.now()
    const at = isoAt(now)
    let shareId = registration.share_id
    if (shareId === null) {
      shareId = randomUUID()
      await insertShare(trx, {
        id: shareId,
        organisation_id: registration.organisation_id,
        kind: 'list',
        school_id: null,
        label: `LTI: ${registration.name}`.slice(0, 120),
        created_at: at,
        created_by: audit.actor,
        ended_at: null,
      })
    }
    const set = {
      status: 'active' as const,
      activated_at: at,
      activated_by: audit.actor,
      deactivated_at: null,
      share_id: shareId,
    }
    return moveRegistration(trx, registration, set, 'lti.activate', audit, now)
  })
}

/** Deactivates a registration: its launches are refused and its scores no longer sent. */
export async function deactivateRegistration(
  db: Db,
  id: string,
  audit: OperatorAudit,
  clock: Clock,
): Promise<LtiRegistrationRow> {
  return inTransaction(db, async (trx) => {
    const registration = await registrationOrThrow(trx, id)
    if (registration.status === 'inactive') throw new ConflictError(`the LTI registration ${id} is inactive already`)
    const now = clock.now()
    const set = { status: 'inactive' as const, deactivated_at: isoAt(now) }
    return moveRegistration(trx, registration, set, 'lti.deactivate', audit, now)
  })
}

const DEPLOYMENT_ID = /^[\x21-\x7e]{1,255}$/

/** Adds a deployment id to a registration (LTI 1.3: case-sensitive, at most 255 ASCII characters). */
export async function addDeployment(db: Db, id: string, deploymentId: string, audit: OperatorAudit, clock: Clock) {
  if (!DEPLOYMENT_ID.test(deploymentId))
    throw new ConflictError('a deployment id is 1 to 255 printable ASCII characters, without spaces')
  await inTransaction(db, async (trx) => {
    await registrationOrThrow(trx, id)
    const now = clock.now()
    await insertDeployments(trx, id, [deploymentId], isoAt(now))
    await auditOperator(
      trx,
      audit,
      { action: 'lti.deployment.add', target: `lti-registration:${id}`, detail: { deploymentId } },
      now,
    )
  })
}

export async function dropDeployment(db: Db, id: string, deploymentId: string, audit: OperatorAudit, clock: Clock) {
  await inTransaction(db, async (trx) => {
    const now = clock.now()
    if (!(await removeDeployment(trx, id, deploymentId)))
      throw new NotFoundError(`the LTI registration ${id} has no deployment ${deploymentId}`)
    await auditOperator(
      trx,
      audit,
      { action: 'lti.deployment.remove', target: `lti-registration:${id}`, detail: { deploymentId } },
      now,
    )
  })
}
