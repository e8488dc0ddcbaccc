/**
 * Publishing a curriculum (`curriculum catalog import`): the stored catalog is replaced, its
 * version moves on, and the endpoints subscribed to `catalog.published` hear of it in the same
 * transaction, so they hear of a catalog if, and only if, it was stored.
 */
import type { Kysely } from 'kysely'
import type { CatalogData } from '../catalog/catalog-files.js'
import type { Clock } from '../clock.js'
import { replaceCatalog } from '../storage/catalog-repository.js'
import { readVersions } from '../storage/meta-repository.js'
import type { Database } from '../storage/tables.js'
import { announceCatalogPublished } from '../storage/webhook-repository.js'

export interface PublishedCatalog {
  catalogVersion: number
  tiers: number
  lessons: number
}

/** Run it in the caller's transaction (`db`), with whatever else must commit with it. */
export async function publishCatalog(db: Kysely<Database>, data: CatalogData, clock: Clock): Promise<PublishedCatalog> {
  await replaceCatalog(db, data)
  const published = (await readVersions(db)).catalog
  const summary = { catalogVersion: published, tiers: data.tiers.length, lessons: data.lessons.length }
  await announceCatalogPublished(db, summary, clock.now())
  return summary
}
