/**
 * The catalog this instance serves. A reload builds the new representations completely and
 * then swaps one reference, so a request sees the old catalog or the new one, never a mix.
 */
import type { Kysely } from 'kysely'
import { buildRepresentations, type CatalogRepresentations } from '../http/catalog-representations.js'
import { readCatalog } from '../storage/catalog-repository.js'
import type { Database } from '../storage/database.js'

export class CatalogState {
  readonly #db: Kysely<Database>
  #current: CatalogRepresentations

  private constructor(db: Kysely<Database>, current: CatalogRepresentations) {
    this.#db = db
    this.#current = current
  }

  static async load(db: Kysely<Database>): Promise<CatalogState> {
    return new CatalogState(db, buildRepresentations(await readCatalog(db)))
  }

  get current(): CatalogRepresentations {
    return this.#current
  }

  async reload(): Promise<void> {
    this.#current = buildRepresentations(await readCatalog(this.#db))
  }
}
