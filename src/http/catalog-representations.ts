/**
 * The catalog changes only by import, so every catalog response is computed once per import:
 * its bytes (serialized with the same schemas the routes declare) and its strong ETag. A request
 * then costs a map lookup and a write, with no storage round trip.
 */
import { createHash } from 'node:crypto'
import fastJson from 'fast-json-stringify'
import type { CatalogIndex } from '../domain/progress.js'
import { isStandardReference, standardKey } from '../domain/standard-reference.js'
import { TIER_IDS, type TierId } from '../domain/tiers.js'
import type { StoredCatalog } from '../storage/catalog-repository.js'
import type { LessonRow } from '../storage/tables.js'
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

/** The lessons aligned to one standard: all of them, and those of each tier that has some. */
export interface StandardLessons {
  readonly all: Representation
  readonly byTier: ReadonlyMap<TierId, Representation>
}

export interface CatalogRepresentations extends CatalogIndex {
  readonly version: number
  readonly lessonTotal: number
  readonly tiers: Representation
  readonly lessons: Representation
  readonly lessonsByTier: ReadonlyMap<TierId, Representation>
  readonly lessonBySlug: ReadonlyMap<string, Representation>
  /** By standardKey: each code exactly as written, each CASE identifier in lower case. */
  readonly lessonsByStandard: ReadonlyMap<string, StandardLessons>
  /** The list of no lessons, for a standard none has. */
  readonly noLessons: Representation
}

type Alignment = LessonBody['standardsAlignment']

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

/** A lesson's alignment as stored, or for a lesson imported before alignments were, its codes alone. */
function alignmentOf(row: LessonRow, standards: Record<string, string[]>): Alignment {
  if (row.standards_alignment !== null) return JSON.parse(row.standards_alignment) as Alignment
  return Object.entries(standards).flatMap(([framework, codes]) => codes.map((code) => ({ framework, code })))
}

/** The keys a lesson is found by with `?standard=`: its codes a URL can carry, and its CASE identifiers. */
function standardKeysOf(alignment: Alignment): Set<string> {
  const keys = new Set<string>()
  for (const { code, caseIdentifier } of alignment) {
    if (isStandardReference(code)) keys.add(standardKey(code))
    if (caseIdentifier !== undefined) keys.add(caseIdentifier.toLowerCase())
  }
  return keys
}

function representLessons(lessons: LessonSummaryBody[]): Representation {
  return represent(stringifyLessons({ lessons, total: lessons.length }))
}

function standardLessons(lessons: LessonSummaryBody[]): StandardLessons {
  const byTier = new Map<TierId, Representation>()
  for (const id of TIER_IDS) {
    const inTier = lessons.filter((lesson) => lesson.tier === id)
    if (inTier.length > 0) byTier.set(id, representLessons(inTier))
  }
  return { all: representLessons(lessons), byTier }
}

export function buildRepresentations(stored: StoredCatalog): CatalogRepresentations {
  const counts = new Map<TierId, number>(TIER_IDS.map((id) => [id, 0]))
  const positions = new Map<string, number>()
  const summaries: LessonSummaryBody[] = []
  const lessonBySlug = new Map<string, Representation>()
  const withStandard = new Map<string, LessonSummaryBody[]>()
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
    const standards = JSON.parse(row.standards) as Record<string, string[]>
    const lesson: LessonBody = {
      ...summary,
      contentTypes: JSON.parse(row.content_types) as string[],
      standards,
      standardsAlignment: alignmentOf(row, standards),
    }
    lessonBySlug.set(row.slug, represent(stringifyLesson(lesson)))
    for (const key of standardKeysOf(lesson.standardsAlignment)) {
      const list = withStandard.get(key)
      if (list === undefined) withStandard.set(key, [summary])
      else list.push(summary)
    }
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
    lessonsByTier.set(id, representLessons(inTier))
  }
  return {
    version: stored.version,
    lessonTotal: summaries.length,
    tiers: represent(stringifyTiers({ tiers })),
    lessons: representLessons(summaries),
    lessonsByTier,
    lessonBySlug,
    lessonsByStandard: new Map([...withStandard].map(([key, lessons]) => [key, standardLessons(lessons)])),
    noLessons: representLessons([]),
    lessonCount: (tier) => counts.get(tier) ?? 0,
    position: (slug) => positions.get(slug),
  }
}

/** The lessons aligned to `reference` (a code or a CASE identifier), of `tier` if given. */
export function lessonsWithStandard(
  catalog: CatalogRepresentations,
  reference: string,
  tier: TierId | undefined,
): Representation {
  const found = catalog.lessonsByStandard.get(standardKey(reference))
  if (found === undefined) return catalog.noLessons
  return tier === undefined ? found.all : (found.byTier.get(tier) ?? catalog.noLessons)
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
