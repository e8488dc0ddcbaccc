/**
 * The list of students a partner must delete, as the partner downloads it: a disclosure of the
 * students' ids (action `deletion.list`), each page recorded before it is handed on, so a download
 * cut short still recorded what it sent (storage/deletion-list-repository.ts reads the list).
 */
import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { AgreementEnd } from '../storage/agreement-end-repository.js'
import { type DeletionEntry, deletionList } from '../storage/deletion-list-repository.js'
import { recordDisclosures } from '../storage/disclosure-log.js'
import type { Database } from '../storage/tables.js'

/** The list of `end` a page at a time, each page's ids recorded as disclosed to the partner's account `accountId`. */
export async function* disclosedDeletionList(
  db: Kysely<Database>,
  end: AgreementEnd,
  accountId: string,
  now: number,
): AsyncGenerator<DeletionEntry[], void, undefined> {
  const context = {
    at: now,
    requestId: randomUUID(),
    keyId: `dashboard:${accountId}`,
    organisationId: end.organisationId,
  }
  for await (const page of deletionList(db, end)) {
    const ids = page.map((entry) => entry.studentId)
    await recordDisclosures(db, context, ids, 'deletion.list', 'disclosed')
    yield page
  }
}
