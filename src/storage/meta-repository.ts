/**
 * Change versions. A writer bumps `catalog` or `access` inside the transaction that makes the
 * change; every instance polls them (one tiny query a second) and reloads what changed. Access
 * changes are bumped by access-change-repository.ts, which also logs what changed, so instances
 * evict only the keys concerned.
 */
import { type Kysely, sql } from 'kysely'
import type { Database } from './tables.js'

export type VersionName = 'catalog' | 'access'

export interface Versions {
  catalog: number
  access: number
}

export async function bumpVersion(db: Kysely<Database>, name: VersionName): Promise<void> {
  await db.updateTable('meta').set({ version: sql`version + 1` }).where('name', '=', name).execute()
}

export async function readVersions(db: Kysely<Database>): Promise<Versions> {
  const rows = await db.selectFrom('meta').select(['name', 'version']).execute()
  const versions: Versions = { catalog: 0, access: 0 }
  for (const row of rows) if (row.name === 'catalog' || row.name === 'access') versions[row.name] = Number(row.version)
  return versions
}

/** True for a database that holds no catalog and no organisation yet (a first start). */
export async function isEmptyDatabase(db: Kysely<Database>): Promise<boolean> {
  const tier = await db.selectFrom('tiers').select('id').limit(1).executeTakeFirst()
  const organisation = await db.selectFrom('organisations').select('id').limit(1).executeTakeFirst()
  return tier === undefined && organisation === undefined
}
