/**
 * The LTI registrations and registration URLs as the dashboard and the command line list them:
 * each with its organisation's and school's names and its deployments. Queries only; what may
 * change them is cases/lti-registrations.ts's.
 */
import type { Kysely } from 'kysely'
import type { Database, LtiRegistrationLinkRow, LtiRegistrationRow } from './tables.js'

type Db = Kysely<Database>

export interface RegistrationSummary {
  registration: LtiRegistrationRow
  organisationName: string
  schoolName: string | null
  deployments: string[]
}

/** Every registration, or an organisation's, newest first, with names and deployments. */
export async function registrationSummaries(db: Db, organisationId?: string): Promise<RegistrationSummary[]> {
  let query = db
    .selectFrom('lti_registrations as r')
    .innerJoin('organisations as o', 'o.id', 'r.organisation_id')
    .leftJoin('schools as s', 's.id', 'r.school_id')
    .selectAll('r')
    .select(['o.name as organisation_name', 's.name as school_name'])
  if (organisationId !== undefined) query = query.where('r.organisation_id', '=', organisationId)
  const rows = await query.orderBy('r.created_at', 'desc').orderBy('r.id').execute()
  const deployments = new Map<string, string[]>()
  if (rows.length > 0) {
    const all = await db
      .selectFrom('lti_deployments')
      .select(['registration_id', 'deployment_id'])
      .where(
        'registration_id',
        'in',
        rows.map((row) => row.id),
      )
      .orderBy('created_at')
      .orderBy('deployment_id')
      .execute()
    for (const row of all)
      deployments.set(row.registration_id, [...(deployments.get(row.registration_id) ?? []), row.deployment_id])
  }
  return rows.map(({ organisation_name, school_name, ...registration }) => ({
    registration,
    organisationName: organisation_name,
    schoolName: school_name,
    deployments: deployments.get(registration.id) ?? [],
  }))
}

export interface RegistrationLinkSummary {
  link: LtiRegistrationLinkRow
  organisationName: string
  schoolName: string | null
  /** How many registrations came through it. */
  registrations: number
}

/** Every registration URL made, newest first (its token is never stored, only its hash). */
export async function registrationLinkSummaries(db: Db): Promise<RegistrationLinkSummary[]> {
  const rows = await db
    .selectFrom('lti_registration_links as l')
    .innerJoin('organisations as o', 'o.id', 'l.organisation_id')
    .leftJoin('schools as s', 's.id', 'l.school_id')
    .selectAll('l')
    .select(['o.name as organisation_name', 's.name as school_name'])
    .select((eb) =>
      eb
        .selectFrom('lti_registrations as r')
        .whereRef('r.link_id', '=', 'l.id')
        .select(eb.fn.countAll<number>().as('n'))
        .as('registrations'),
    )
    .orderBy('l.created_at', 'desc')
    .orderBy('l.id')
    .execute()
  return rows.map(({ organisation_name, school_name, registrations, ...link }) => ({
    link,
    organisationName: organisation_name,
    schoolName: school_name,
    registrations: Number(registrations ?? 0),
  }))
}

export function registrationLinkById(db: Db, id: string): Promise<LtiRegistrationLinkRow | undefined> {
  return db.selectFrom('lti_registration_links').selectAll().where('id', '=', id).executeTakeFirst()
}
