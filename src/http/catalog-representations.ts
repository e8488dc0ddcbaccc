/**
 * The catalog changes only by import, so every catalog response is computed once per import:
 * its bytes (serialized with the same schemas the routes declare) and its strong ETag. A request
 * then costs a map lookup and a write, with no storage round trip.
 */
import { createHash } from 'node:crypto'
import fastJson from 'fast-json-stringify'
import type { CatalogIndex } from '../domain/progress.js'
import { TIER_IDS, type TierId } from '../domain/tiers.js'
import type { StoredCatalog } from '../storage/catalog-repository.js'
import { type ByteString, byteString } from './byte-string.js'
import {
  type LessonBody,
  LessonSchema,
  LessonsResponseSchema,
  LessonSummarySchema,
  type LessonSummaryBody,
  type TierBody,
  TierSchema,
  TiersResponseSchema,
} from './schemas/catalog.js'

export interface Representation {
  readonly body: string
  /** The same body as its UTF-8 bytes, which the fast path sends as they are. */
  readonly bytes: ByteString
  /** `Content-Length` of the body in UTF-8. */
  readonly contentLength: string
  /** Strong validator (RFC 9110 8.8.3): the same bytes always get the same tag. */
  readonly etag: string
}

export interface CatalogRepresentations extends CatalogIndex {
  readonly version: number
  readonly lessonTotal: number
  readonly tiers: Representation
  readonly lessons: Representation
  readonly lessonsByTier: ReadonlyMap<TierId, Representation>
  readonly lessonBySlug: ReadonlyMap<string, Representation>
}

const refs = { Tier: TierSchema, LessonSummary: LessonSummarySchema }
const stringifyTiers = fastJson(TiersResponseSchema, { schema: refs })
const stringifyLessons = fastJson(LessonsResponseSchema, { schema: refs })
const stringifyLesson = fastJson(LessonSchema)

function represent(body: string): Representation {
  return {
    body,
    bytes: byteString(body),
    contentLength: String(Buffer.byteLength(body)),
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`,
  }
}

export function buildRepresentations(stored: StoredCatalog): CatalogRepresentations {
  const counts = new Map<TierId, number>(TIER_IDS.map((id) => [id, 0]))
  const positions = new Map<string, number>()
  const summaries: LessonSummaryBody[] = []
  const lessonBySlug = new Map<string, Representation>()
  for (const row of stored.lessons) {
    const tier = row.tier
    counts.set(tier, (counts.get(tier) ?? 0) + 1)
    positions.set(row.slug, Number(row.position))
    const summary: LessonSummaryBody = {
      slug: row.slug,
      lessonId: row.lesson_id,
      tier,
      title: row.title,
      slideCount: Number(row.slide_count),
    }
    summaries.push(summary)
    const lesson: LessonBody = {
      ...summary,
      contentTypes: JSON.parse(row.content_types) as string[],
      standards: JSON.parse(row.standards) as Record<string, string[]>,
    }
    lessonBySlug.set(row.slug, represent(stringifyLesson(lesson)))
  }
  const tiers: TierBody[] = stored.tiers.map((row) => ({
    id: row.id,
    label: row.label,
    ageRange: row.age_range,
    lessonCount: counts.get(row.id) ?? 0,
  }))
  const lessonsByTier = new Map<TierId, Representation>()
  for (const id of TIER_IDS) {
    const inTier = summaries.filter((lesson) => lesson.tier === id)
    lessonsByTier.set(id, represent(stringifyLessons({ lessons: inTier, total: inTier.length })))
  }
  return {
    version: stored.version,
    lessonTotal: summaries.length,
    tiers: represent(stringifyTiers({ tiers })),
    lessons: represent(stringifyLessons({ lessons: summaries, total: summaries.length })),
    lessonsByTier,
    lessonBySlug,
    lessonCount: (tier) => counts.get(tier) ?? 0,
    position: (slug) => positions.get(slug),
  }
}

/**
 * If-None-Match uses the weak comparison (RFC 9110 13.1.2): a W/ prefix on either side is
 * ignored. `*` matches any current representation.
 */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false
  if (header === etag) return true
  if (header.trim() === '*') return true
  for (const part of header.split(',')) {
    const tag = part.trim()
    if (tag === etag || (tag.startsWith('W/') && tag.slice(2) === etag)) return true
  }
  return false
}
