/**
 * Student progress as the API serves it. Entries come in catalog order; entries whose lesson
 * has left the catalog keep counting towards XP and time and are listed last, by slug.
 */
import type { TierId } from './tiers.js'

export type ProgressStatus = 'in_progress' | 'completed'

export const PROGRESS_STATUSES: readonly ProgressStatus[] = ['in_progress', 'completed']

export interface ProgressEntry {
  lessonSlug: string
  status: ProgressStatus
  xp: number
  timeSeconds: number
  startedAt: string
  completedAt: string | null
}

export interface ProgressSummary {
  totalLessons: number
  completedLessons: number
  totalXp: number
  totalTimeSeconds: number
}

/** What the summary needs to know of the catalog. */
export interface CatalogIndex {
  lessonCount(tier: TierId): number
  /** Position of a lesson in catalog order, or undefined if the catalog has no such lesson. */
  position(slug: string): number | undefined
}

export function tierOfSlug(slug: string): string {
  const slash = slug.indexOf('/')
  return slash === -1 ? '' : slug.slice(0, slash)
}

export function sortInCatalogOrder(entries: ProgressEntry[], catalog: CatalogIndex): ProgressEntry[] {
  const rank = (slug: string) => catalog.position(slug) ?? Number.MAX_SAFE_INTEGER
  return entries.sort(
    (a, b) =>
      rank(a.lessonSlug) - rank(b.lessonSlug) ||
      (a.lessonSlug < b.lessonSlug ? -1 : a.lessonSlug > b.lessonSlug ? 1 : 0),
  )
}

/**
 * totalLessons: lessons in the student's current tier; completedLessons: completed entries whose
 * lesson is in that tier; totalXp and totalTimeSeconds: sums over every entry.
 */
export function summarise(entries: readonly ProgressEntry[], tier: TierId, catalog: CatalogIndex): ProgressSummary {
  let completedLessons = 0
  let totalXp = 0
  let totalTimeSeconds = 0
  for (const entry of entries) {
    totalXp += entry.xp
    totalTimeSeconds += entry.timeSeconds
    if (entry.status === 'completed' && tierOfSlug(entry.lessonSlug) === tier) completedLessons++
  }
  return { totalLessons: catalog.lessonCount(tier), completedLessons, totalXp, totalTimeSeconds }
}

/** A student's progress as `GET /students/:id/progress` answers it. */
export interface ProgressView {
  profileId: string
  displayName: string
  tier: TierId
  progress: ProgressEntry[]
  summary: ProgressSummary
}

/** The answer for a student's stored entries (sorted in place into catalog order). */
export function progressView(
  student: { id: string; firstName: string; tier: TierId; entries: ProgressEntry[] },
  catalog: CatalogIndex,
): ProgressView {
  const progress = sortInCatalogOrder(student.entries, catalog)
  return {
    profileId: student.id,
    displayName: student.firstName,
    tier: student.tier,
    progress,
    summary: summarise(progress, student.tier, catalog),
  }
}
