/**
 * The catalog as stored. An import replaces it whole in one transaction, so a reader (or a
 * crash half-way) sees either the old catalog or the new one, never a mix.
 */
import type { Kysely } from 'kysely'
import type { CatalogData } from '../catalog/catalog-files.js'
import { inTransaction } from './transaction.js'
import type { TierId } from '../domain/tiers.js'
import type { Database, LessonRow, TierRow } from './tables.js'
import { bumpVersion } from './meta-repository.js'

export interface StoredCatalog {
  version: number
  tiers: TierRow[]
  lessons: LessonRow[]
}

export async function replaceCatalog(db: Kysely<Database>, catalog: CatalogData): Promise<void> {
  await inTransaction(db, async (trx) => {
    await trx.deleteFrom('lessons').execute()
    await trx.deleteFrom('tiers').execute()
    await trx
      .insertInto('tiers')
      .values(
        catalog.tiers.map((tier, position) => ({ id: tier.id, label: tier.label, age_range: tier.ageRange, position })),
      )
      .execute()
    if (catalog.lessons.length > 0) {
      await trx
        .insertInto('lessons')
        .values(
          catalog.lessons.map((lesson) => ({
            slug: lesson.slug,
            tier: lesson.tier,
            lesson_id: lesson.lessonId,
            title: lesson.title,
            slide_count: lesson.slideCount,
            content_types: JSON.stringify(lesson.contentTypes),
            standards: JSON.stringify(lesson.standards),
            standards_alignment: JSON.stringify(lesson.standardsAlignment),
            slides: JSON.stringify(lesson.slides),
            position: lesson.position,
            source_file: lesson.sourceFile,
          })),
        )
        .execute()
    }
    await bumpVersion(trx, 'catalog')
  })
}

/** The whole catalog, read in one transaction so tiers, lessons and version agree. */
export async function readCatalog(db: Kysely<Database>): Promise<StoredCatalog> {
  // SQLite ignores the level: its read transactions are snapshots already.
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      const meta = await trx.selectFrom('meta').select('version').where('name', '=', 'catalog').executeTakeFirst()
      const tiers = await trx.selectFrom('tiers').selectAll().orderBy('position').execute()
      const lessons = await trx.selectFrom('lessons').selectAll().orderBy('position').execute()
      return { version: Number(meta?.version ?? 0), tiers, lessons }
    })
}

/** The slugs of the stored catalog's lessons. */
export async function lessonSlugs(db: Kysely<Database>): Promise<Set<string>> {
  const rows = await db.selectFrom('lessons').select('slug').execute()
  return new Set(rows.map((row) => row.slug))
}

/** One lesson of the stored catalog by its slug (`tier/lesson`), or undefined when it has none. */
export function lessonBySlug(db: Kysely<Database>, slug: string): Promise<LessonRow | undefined> {
  return db.selectFrom('lessons').selectAll().where('slug', '=', slug).executeTakeFirst()
}

/** A lesson as a list of lessons shows it: no slides. */
export interface LessonHeading {
  slug: string
  tier: TierId
  title: string
  slideCount: number
  /** Framework -> codes. */
  standards: Record<string, string[]>
}

function headingOf(row: Pick<LessonRow, 'slug' | 'tier' | 'title' | 'slide_count' | 'standards'>): LessonHeading {
  return {
    slug: row.slug,
    tier: row.tier,
    title: row.title,
    slideCount: row.slide_count,
    standards: JSON.parse(row.standards) as Record<string, string[]>,
  }
}

const HEADING_COLUMNS = ['slug', 'tier', 'title', 'slide_count', 'standards'] as const

/** The stored lesson of `slug`, without its slides; undefined when the catalog has none. */
export async function lessonHeading(db: Kysely<Database>, slug: string): Promise<LessonHeading | undefined> {
  const row = await db.selectFrom('lessons').select(HEADING_COLUMNS).where('slug', '=', slug).executeTakeFirst()
  return row === undefined ? undefined : headingOf(row)
}

/**
 * The tiers and every lesson's heading, in catalog order; two reads without a transaction (which
 * would make this a writer), since a picker shown across a catalog import is harmless.
 */
export async function catalogOutline(db: Kysely<Database>): Promise<{ tiers: TierRow[]; lessons: LessonHeading[] }> {
  const tiers = await db.selectFrom('tiers').selectAll().orderBy('position').execute()
  const lessons = await db.selectFrom('lessons').select(HEADING_COLUMNS).orderBy('position').execute()
  return { tiers, lessons: lessons.map(headingOf) }
}
