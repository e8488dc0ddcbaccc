/**
 * What a data-sharing agreement says, as a privacy officer reads it: its purpose, the kinds of a
 * student's data it lets the partner receive, and how long after it ends the partner has to
 * delete them (the disposition rule). Its term is its signing date to its expiry (agreements.ts).
 */
import { agreementWindow } from './agreements.js'

/** The kinds of a student's data the service can disclose, in the order they are listed. */
export const DATA_CATEGORIES = ['first_name', 'tier', 'progress'] as const
export type DataCategory = (typeof DATA_CATEGORIES)[number]

export const DATA_CATEGORY_LABELS: Readonly<Record<DataCategory, string>> = {
  first_name: 'first name',
  tier: 'tier',
  progress: 'progress',
}

/** Days after its end within which the partner must delete the data, unless the agreement says otherwise. */
export const DEFAULT_DISPOSITION_DAYS = 30
export const MAX_DISPOSITION_DAYS = 3650
export const MAX_PURPOSE_LENGTH = 1000

const DAY = 86_400_000

export function isDataCategory(value: string): value is DataCategory {
  return (DATA_CATEGORIES as readonly string[]).includes(value)
}

/**
 * Categories as typed (`first_name tier`, `tier,progress`), in the canonical order and each once;
 * throws with a message naming what is accepted for an unknown word or an empty list.
 */
export function parseDataCategories(text: string): DataCategory[] {
  const words = text
    .split(/[\s,]+/)
    .map((word) => word.trim().toLowerCase().replace('-', '_'))
    .filter((word) => word !== '')
  const unknown = words.filter((word) => !isDataCategory(word))
  if (unknown.length > 0)
    throw new Error(`unknown data category "${unknown[0]}": use any of ${DATA_CATEGORIES.join(', ')}`)
  if (words.length === 0) throw new Error(`name at least one data category: ${DATA_CATEGORIES.join(', ')}`)
  return DATA_CATEGORIES.filter((category) => words.includes(category))
}

/** As stored: space-separated, canonical order. */
export function formatDataCategories(categories: readonly DataCategory[]): string {
  return DATA_CATEGORIES.filter((category) => categories.includes(category)).join(' ')
}

/** Stored text back to categories; words that are not categories are dropped. */
export function storedDataCategories(text: string): DataCategory[] {
  const words = text.split(' ')
  return DATA_CATEGORIES.filter((category) => words.includes(category))
}

/** `first name, tier and progress`. */
export function describeDataCategories(categories: readonly DataCategory[]): string {
  const labels = categories.map((category) => DATA_CATEGORY_LABELS[category])
  return labels.length <= 1 ? (labels[0] ?? 'nothing') : `${labels.slice(0, -1).join(', ')} and ${labels.at(-1)}`
}

/** A purpose as stored: one line, since it is shown in tables, CSV cells and terminals. */
export function normalizePurpose(purpose: string): string {
  return purpose.replace(/\s+/g, ' ').trim()
}

/** Why a purpose (as `normalizePurpose` makes it) cannot be recorded, or null. */
export function purposeProblem(purpose: string): string | null {
  if (purpose === '') return 'an agreement needs a purpose: what the partner may use the data for'
  if (purpose.length > MAX_PURPOSE_LENGTH) return `a purpose has at most ${MAX_PURPOSE_LENGTH} characters`
  // Control characters would let a purpose forge lines in a terminal or a log.
  if (/\p{Cc}/u.test(purpose)) return 'a purpose cannot hold control characters'
  return null
}

/** Why a disposition period cannot be recorded, or null. */
export function dispositionDaysProblem(days: number): string | null {
  return Number.isInteger(days) && days >= 0 && days <= MAX_DISPOSITION_DAYS
    ? null
    : `the disposition period is a whole number of days from 0 to ${MAX_DISPOSITION_DAYS}`
}

export interface AgreementDates {
  signedAt: string
  expiresAt: string | null
  endedAt: string | null
}

/** When the agreement stops applying (the earlier of its expiry and its end), or null while open-ended. */
export function agreementEndsAt(dates: AgreementDates): string | null {
  const { until } = agreementWindow(dates.signedAt, dates.expiresAt, dates.endedAt)
  return until === null ? null : new Date(until).toISOString()
}

/** The day by which the partner must have deleted the data, once the end is known; null before. */
export function deletionDueAt(dates: AgreementDates, dispositionDays: number): string | null {
  const end = agreementEndsAt(dates)
  return end === null ? null : new Date(Date.parse(end) + dispositionDays * DAY).toISOString()
}

/**
 * The agreement under which something happened at `at`: among those in force then (signed, not
 * yet expired or ended), the one signed last; undefined when none was.
 */
export function agreementInForceAt<T extends AgreementDates>(agreements: readonly T[], at: number): T | undefined {
  let chosen: T | undefined
  for (const agreement of agreements) {
    const { from, until } = agreementWindow(agreement.signedAt, agreement.expiresAt, agreement.endedAt)
    if (from > at || (until !== null && at >= until)) continue
    if (chosen === undefined || agreement.signedAt > chosen.signedAt) chosen = agreement
  }
  return chosen
}
