/**
 * Made-up students with plausible progress, for the demo and for partners' sandboxes. The
 * names are invented first names; no real child's data is ever part of either.
 */
import { randomUUID } from 'node:crypto'
import type { ProgressEntry } from '../domain/progress.js'
import { TIER_IDS, type TierId } from '../domain/tiers.js'
import type { ProgressImportRow } from '../storage/student-import-repository.js'

export const SYNTHETIC_NAMES = [
  'Maya',
  'Leo',
  'Aisha',
  'Noah',
  'Sofia',
  'Kenji',
  'Amara',
  'Lucas',
  'Zara',
  'Mateo',
  'Ivy',
  'Omar',
]

export interface SyntheticStudent {
  id: string
  firstName: string
  tier: TierId
}

/** What progress generation needs to know of a lesson. */
export interface LessonOutline {
  slug: string
  tier: string
  slideCount: number
}

const DAY = 86_400_000

/** A small deterministic generator, so the same seed always gives the same progress. */
function sequence(seed: number): () => number {
  let state = seed
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648
    return state / 2_147_483_648
  }
}

/** `newId` is for tests that need a chosen id; otherwise random UUIDs. */
export function syntheticStudents(
  count = SYNTHETIC_NAMES.length,
  newId: () => string = randomUUID,
): SyntheticStudent[] {
  return Array.from({ length: count }, (_, index) => ({
    id: newId(),
    firstName: SYNTHETIC_NAMES[index % SYNTHETIC_NAMES.length]!,
    tier: TIER_IDS[index % TIER_IDS.length]!,
  }))
}

/** Each student has started a few lessons of their tier, in order, most of them completed. */
export function syntheticProgress(
  lessons: readonly LessonOutline[],
  students: readonly SyntheticStudent[],
  now: number,
  seed = 42,
): ProgressImportRow[] {
  const random = sequence(seed)
  const rows: ProgressImportRow[] = []
  for (const student of students) {
    const ofTier = lessons.filter((lesson) => lesson.tier === student.tier)
    if (ofTier.length === 0) continue
    const started = 1 + Math.floor(random() * Math.min(6, ofTier.length))
    for (const [index, lesson] of ofTier.slice(0, started).entries()) {
      const completed = index < started - 1 || random() < 0.3
      const startedAt = now - (started - index + 1) * 2 * DAY - Math.floor(random() * DAY)
      const timeSeconds = 300 + Math.floor(random() * 1200)
      const entry: ProgressEntry = {
        lessonSlug: lesson.slug,
        status: completed ? 'completed' : 'in_progress',
        xp: completed ? 50 + lesson.slideCount * 10 : Math.floor(random() * 40),
        timeSeconds,
        startedAt: new Date(startedAt).toISOString(),
        completedAt: completed ? new Date(startedAt + timeSeconds * 1000 + DAY).toISOString() : null,
      }
      rows.push({ studentId: student.id, ...entry })
    }
  }
  return rows
}
