/**
 * Reading the request log (docs/request-log.md): a page of entries, newest first, filtered by key,
 * status class, problem code and route, or the one entry of a request id. A partner sees its own
 * organisation's entries and its sandbox's, nothing else: a filter naming another organisation's
 * key or request id finds nothing. The operator sees every organisation's, and may name one.
 *
 * Each entry comes with its key's name and display prefix (and, for the operator, its
 * organisation's name), read from the keys and organisations tables: the log itself keeps ids.
 */
import type { Kysely } from 'kysely'
import { pageRequestLog } from '../storage/request-log-pages.js'
import { type PlacedEntry, requestLogEntry } from '../storage/request-log-repository.js'
import type { Database } from '../storage/tables.js'

/** Who reads: a partner, limited to its organisations; or the operator, who sees all. */
export type RequestLogReader =
  | { readonly partner: true; readonly organisations: readonly string[] }
  | { readonly partner: false }

export interface RequestLogQuery {
  keyId?: string
  /** 2 for 2xx, and so on. */
  statusClass?: number
  problem?: string
  route?: string
  /** The operator's filter by organisation. */
  organisationId?: string
  /** Where the page starts: a `next` of an earlier page. */
  before?: string
}

/** An entry as a page shows it. */
export interface ShownEntry extends PlacedEntry {
  readonly keyName: string | undefined
  readonly keyPrefix: string | undefined
  readonly organisationName: string | undefined
}

export interface RequestLogPageView {
  entries: ShownEntry[]
  next: string | null
}

/** Entries per page. */
export const REQUEST_LOG_PAGE = 100

function organisationsOf(reader: RequestLogReader, organisationId: string | undefined): readonly string[] | undefined {
  if (reader.partner) return reader.organisations
  return organisationId === undefined ? undefined : [organisationId]
}

/** The entries with their keys' names and prefixes, and their organisations' names. */
async function shown(db: Kysely<Database>, entries: readonly PlacedEntry[]): Promise<ShownEntry[]> {
  const keyIds = [...new Set(entries.map((entry) => entry.keyId))]
  const organisationIds = [...new Set(entries.map((entry) => entry.organisationId))]
  const [keys, organisations] = await Promise.all([
    keyIds.length === 0
      ? []
      : db.selectFrom('api_keys').select(['id', 'name', 'display_prefix']).where('id', 'in', keyIds).execute(),
    organisationIds.length === 0
      ? []
      : db.selectFrom('organisations').select(['id', 'name']).where('id', 'in', organisationIds).execute(),
  ])
  const keyById = new Map(keys.map((key) => [key.id, key]))
  const organisationById = new Map(organisations.map((organisation) => [organisation.id, organisation.name]))
  return entries.map((entry) => ({
    ...entry,
    keyName: keyById.get(entry.keyId)?.name,
    keyPrefix: keyById.get(entry.keyId)?.display_prefix,
    organisationName: organisationById.get(entry.organisationId),
  }))
}

/** A page of the entries `reader` may see that match `query`, newest first. */
export async function readRequestLog(
  db: Kysely<Database>,
  reader: RequestLogReader,
  query: RequestLogQuery,
  limit = REQUEST_LOG_PAGE,
): Promise<RequestLogPageView> {
  const organisations = organisationsOf(reader, query.organisationId)
  const page = await pageRequestLog(
    db,
    {
      ...(organisations === undefined ? {} : { organisations }),
      ...(query.keyId === undefined ? {} : { keyId: query.keyId }),
      ...(query.statusClass === undefined ? {} : { statusClass: query.statusClass }),
      ...(query.problem === undefined ? {} : { problem: query.problem }),
      ...(query.route === undefined ? {} : { route: query.route }),
    },
    limit,
    query.before,
  )
  return { entries: await shown(db, page.entries), next: page.next }
}

/** The entry of `requestId` if `reader` may see it (the operator, within `organisationId` when given). */
export async function findRequest(
  db: Kysely<Database>,
  reader: RequestLogReader,
  requestId: string,
  organisationId?: string,
): Promise<ShownEntry | undefined> {
  const entry = await requestLogEntry(db, requestId, organisationsOf(reader, organisationId))
  return entry === undefined ? undefined : (await shown(db, [entry]))[0]
}
