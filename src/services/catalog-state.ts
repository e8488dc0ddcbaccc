/**
 * The catalog this instance serves. A reload builds the new representations completely and
 * then swaps one reference, so a request sees the old catalog or the new one, never a mix.
 *
 * What a catalog is served as (bytes, ETags) is http's business, so app.ts passes the builder
 * in; this module needs only the catalog version, to tell the change watcher what it holds.
 */
import type { Kysely } from 'kysely'
import { type StoredCatalog, readCatalog } from '../storage/catalog-repository.js'
import type { Database } from '../storage/tables.js'

/** What a built catalog must expose to this module: the import it was built from. */
export interface CatalogVersioned {
  readonly version: number
}

/** Turns the stored catalog into what requests are served from. */
export type CatalogBuilder<T extends CatalogVersioned> = (stored: StoredCatalog) => T

export class CatalogState<T extends CatalogVersioned = CatalogVersioned> {
  readonly #db: Kysely<Database>
  readonly #build: CatalogBuilder<T>
  #current: T

  private constructor(db: Kysely<Database>, build: CatalogBuilder<T>, current: T) {
    this.#db = db
    this.#build = build
    this.#current = current
  }

  static async load<T extends CatalogVersioned>(
    db: Kysely<Database>,
    build: CatalogBuilder<T>,
  ): Promise<CatalogState<T>> {
    return new CatalogState(db, build, build(await readCatalog(db)))
  }

  get current(): T {
    return this.#current
  }

  async reload(): Promise<void> {
    this.#current = this.#build(await readCatalog(this.#db))
  }
}
