/**
 * Disclosure records as a report states them: who (the organisation, and the API key, dashboard
 * account or webhook endpoint that made the request), when, what (the action, its outcome and
 * the kinds of data it handed over) and under which agreement. The log records the organisation
 * but not the agreement, so the agreement is the organisation's agreement in force at the
 * record's time (domain/agreement-terms.ts); a refusal for want of one has none.
 *
 * Names are looked up once per batch and kept: what is kept grows with the organisations, keys,
 * accounts and endpoints a report meets, never with its rows.
 */
import type { Kysely } from 'kysely'
import {
  agreementInForceAt,
  type DataCategory,
  deletionDueAt,
  storedDataCategories,
} from '../domain/agreement-terms.js'
import type { KeyMode } from '../domain/api-key.js'
import { type DisclosureAction, type DisclosureOutcome, disclosedData } from '../domain/disclosure.js'
import { UUID } from '../domain/uuid.js'
import { type BatchFilter, disclosureBatches } from './disclosure-batch-repository.js'
import type { AgreementRow, Database, DisclosureRow } from './tables.js'

type Db = Kysely<Database>

export interface ReportAgreement {
  id: string
  documentRef: string
  /** '' for agreements recorded before purposes were. */
  purpose: string
  dataCategories: DataCategory[]
  signedAt: string
  expiresAt: string | null
  endedAt: string | null
  dispositionDays: number
  /** When the partner must have deleted the data by; null while the agreement is open-ended. */
  deleteBy: string | null
}

/**
 * What made the request: a key (`key_id` a key's id), a partner's dashboard account, a webhook
 * endpoint, or an LTI platform's registration (a score sent to its gradebook).
 */
export type ReportRequester =
  | { kind: 'key'; keyId: string; name: string | null; prefix: string | null; mode: KeyMode | null }
  | { kind: 'dashboard'; accountId: string; email: string | null }
  | { kind: 'webhook'; endpointId: string; url: string | null; event: string | null }
  | { kind: 'lti'; registrationId: string; platform: string | null; issuer: string | null }

export interface ReportRow {
  id: number
  at: string
  studentId: string
  /** The student's id in the district's system while the student is stored; null once erased or never given. */
  studentExternalId: string | null
  action: DisclosureAction
  outcome: DisclosureOutcome
  /** The kinds of data the request handed over: none for a refusal or an unknown student. */
  data: readonly DataCategory[]
  /**
   * Of those, the kinds the agreement does not list: the API serves every kind its scopes allow
   * whatever the agreement lists, so this is where a privacy officer sees the difference.
   */
  beyondAgreement: readonly DataCategory[]
  requestId: string
  organisation: { id: string; name: string | null }
  by: ReportRequester
  agreement: ReportAgreement | null
}

/** Rows per lookup statement, well within both engines' parameter limits. */
const LOOKUP_CHUNK = 500

function requesterOf(keyId: string): ReportRequester {
  if (keyId.startsWith('dashboard:')) return { kind: 'dashboard', accountId: keyId.slice(10), email: null }
  if (keyId.startsWith('webhook:')) return { kind: 'webhook', endpointId: keyId.slice(8), url: null, event: null }
  if (keyId.startsWith('lti:')) return { kind: 'lti', registrationId: keyId.slice(4), platform: null, issuer: null }
  return { kind: 'key', keyId, name: null, prefix: null, mode: null }
}

function reportAgreement(row: AgreementRow): ReportAgreement {
  const dates = { signedAt: row.signed_at, expiresAt: row.expires_at, endedAt: row.ended_at }
  return {
    id: row.id,
    documentRef: row.document_ref,
    purpose: row.purpose,
    dataCategories: storedDataCategories(row.data_categories),
    ...dates,
    dispositionDays: row.disposition_days,
    deleteBy: deletionDueAt(dates, row.disposition_days),
  }
}

async function inChunks<T>(ids: readonly string[], read: (chunk: string[]) => Promise<T[]>): Promise<T[]> {
  const out: T[] = []
  for (let from = 0; from < ids.length; from += LOOKUP_CHUNK)
    out.push(...(await read(ids.slice(from, from + LOOKUP_CHUNK))))
  return out
}

/** Names and agreements met so far, looked up a batch at a time. */
export class DisclosureDescriber {
  readonly #db: Db
  readonly #organisations = new Map<string, string | null>()
  readonly #keys = new Map<string, { name: string; prefix: string; mode: KeyMode } | null>()
  readonly #accounts = new Map<string, string | null>()
  readonly #endpoints = new Map<string, string | null>()
  readonly #platforms = new Map<string, { name: string; issuer: string } | null>()
  readonly #agreements = new Map<string, ReportAgreement[]>()

  constructor(db: Db) {
    this.#db = db
  }

  async describe(rows: readonly DisclosureRow[]): Promise<ReportRow[]> {
    await this.#lookUp(rows)
    const events = await this.#webhookEvents(rows)
    const externalIds = await this.#externalIds(rows)
    return rows.map((row) => {
      const by = requesterOf(row.key_id)
      if (by.kind === 'key') {
        const key = this.#keys.get(by.keyId)
        if (key) Object.assign(by, key)
      } else if (by.kind === 'dashboard') by.email = this.#accounts.get(by.accountId) ?? null
      else if (by.kind === 'lti') {
        const platform = this.#platforms.get(by.registrationId)
        by.platform = platform?.name ?? null
        by.issuer = platform?.issuer ?? null
      } else {
        by.url = this.#endpoints.get(by.endpointId) ?? null
        by.event = events.get(row.request_id) ?? null
      }
      const agreement = agreementInForceAt(this.#agreements.get(row.organisation_id) ?? [], Date.parse(row.at))
      const data = disclosedData(row.action, row.outcome, by.kind === 'webhook' ? (by.event ?? undefined) : undefined)
      return {
        id: row.id,
        at: row.at,
        studentId: row.student_id,
        studentExternalId: externalIds.get(row.student_id) ?? null,
        action: row.action,
        outcome: row.outcome,
        data,
        beyondAgreement:
          agreement === undefined ? [] : data.filter((category) => !agreement.dataCategories.includes(category)),
        requestId: row.request_id,
        organisation: { id: row.organisation_id, name: this.#organisations.get(row.organisation_id) ?? null },
        by,
        agreement: agreement ?? null,
      }
    })
  }

  /** The district's ids of the batch's students; not kept, since a district export meets every student. */
  async #externalIds(rows: readonly DisclosureRow[]): Promise<Map<string, string>> {
    const ids = [...new Set(rows.map((row) => row.student_id))]
    const found = await inChunks(ids, (chunk) =>
      this.#db
        .selectFrom('students')
        .select(['id', 'external_id'])
        .where('id', 'in', chunk)
        .where('external_id', 'is not', null)
        .execute(),
    )
    return new Map(found.map((row) => [row.id, row.external_id!]))
  }

  /** The event of each webhook record's delivery (its request id), for what it carried; not kept. */
  async #webhookEvents(rows: readonly DisclosureRow[]): Promise<Map<string, string>> {
    const ids = [...new Set(rows.filter((row) => row.action === 'webhook').map((row) => row.request_id))]
    const found = await inChunks(ids, (chunk) =>
      this.#db.selectFrom('webhook_deliveries').select(['id', 'event_type']).where('id', 'in', chunk).execute(),
    )
    return new Map(found.map((row) => [row.id, row.event_type]))
  }

  async #lookUp(rows: readonly DisclosureRow[]): Promise<void> {
    const missing = (known: Map<string, unknown>, ids: Iterable<string>) => [
      ...new Set([...ids].filter((id) => !known.has(id))),
    ]
    const organisations = missing(
      this.#organisations,
      rows.map((row) => row.organisation_id),
    )
    const requesters = rows.map((row) => requesterOf(row.key_id))
    const keys = missing(
      this.#keys,
      requesters.flatMap((r) => (r.kind === 'key' ? [r.keyId] : [])),
    )
    const accounts = missing(
      this.#accounts,
      requesters.flatMap((r) => (r.kind === 'dashboard' ? [r.accountId] : [])),
    )
    const endpoints = missing(
      this.#endpoints,
      requesters.flatMap((r) => (r.kind === 'webhook' ? [r.endpointId] : [])),
    )
    const platforms = missing(
      this.#platforms,
      requesters.flatMap((r) => (r.kind === 'lti' ? [r.registrationId] : [])),
    )
    const db = this.#db
    // Ids are text on both engines, so anything the log holds can be looked up as it is.
    for (const row of await inChunks(organisations, (ids) =>
      db.selectFrom('organisations').select(['id', 'name']).where('id', 'in', ids).execute(),
    ))
      this.#organisations.set(row.id, row.name)
    for (const row of await inChunks(organisations, (ids) =>
      db.selectFrom('agreements').selectAll().where('organisation_id', 'in', ids).execute(),
    )) {
      const list = this.#agreements.get(row.organisation_id) ?? []
      list.push(reportAgreement(row))
      this.#agreements.set(row.organisation_id, list)
    }
    for (const row of await inChunks(keys, (ids) =>
      db.selectFrom('api_keys').select(['id', 'name', 'display_prefix', 'mode']).where('id', 'in', ids).execute(),
    ))
      this.#keys.set(row.id, { name: row.name, prefix: row.display_prefix, mode: row.mode })
    for (const row of await inChunks(accounts, (ids) =>
      db.selectFrom('accounts').select(['id', 'email']).where('id', 'in', ids).execute(),
    ))
      this.#accounts.set(row.id, row.email)
    for (const row of await inChunks(endpoints, (ids) =>
      db.selectFrom('webhook_endpoints').select(['id', 'url']).where('id', 'in', ids).execute(),
    ))
      this.#endpoints.set(row.id, row.url)
    for (const row of await inChunks(platforms, (ids) =>
      db.selectFrom('lti_registrations').select(['id', 'name', 'issuer']).where('id', 'in', ids).execute(),
    ))
      this.#platforms.set(row.id, { name: row.name, issuer: row.issuer })
    // What was asked for and not found is remembered too, so it is not asked for again.
    for (const [known, ids] of [
      [this.#organisations, organisations],
      [this.#keys, keys],
      [this.#accounts, accounts],
      [this.#endpoints, endpoints],
      [this.#platforms, platforms],
    ] as const)
      for (const id of ids) if (!known.has(id)) known.set(id, null)
  }
}

/** Described rows, oldest first, a batch at a time (see disclosure-batch-repository.ts). */
export async function* describedDisclosures(
  db: Db,
  filter: BatchFilter,
  batchRows?: number,
): AsyncGenerator<ReportRow[], void, undefined> {
  const describer = new DisclosureDescriber(db)
  for await (const rows of disclosureBatches(db, filter, batchRows)) yield await describer.describe(rows)
}

/** The student a report is about, as stored (it may never have been, or been erased). */
export interface ReportStudent {
  id: string
  firstName: string | null
  externalId: string | null
}

export async function reportStudent(db: Db, studentId: string): Promise<ReportStudent> {
  const row = UUID.test(studentId)
    ? await db
        .selectFrom('students')
        .select(['first_name', 'external_id'])
        .where('id', '=', studentId)
        .executeTakeFirst()
    : undefined
  return { id: studentId, firstName: row?.first_name ?? null, externalId: row?.external_id ?? null }
}

/** The stored student whose id in the district's system is `externalId`, if any. */
export async function studentIdByExternalId(db: Db, externalId: string): Promise<string | undefined> {
  const row = await db.selectFrom('students').select('id').where('external_id', '=', externalId).executeTakeFirst()
  return row?.id
}
