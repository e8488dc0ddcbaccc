/**
 * A lesson slug: `<tier>/<lessonId>-<title-words>`, e.g. `explorer/e1-robots-follow-instructions`.
 * The file name of a lesson gives it; the API takes it as the lesson key.
 *
 * One definition, from the contract's words: a tier id, a lesson id that is "a letter plus
 * digits" (any number of them: `e1000` is a lesson that may exist one day), and title words.
 * Catalog import, request validation and the OpenAPI document all use these patterns, so a slug
 * of this form that names no lesson is "not found", never "malformed".
 */
import { TIER_IDS } from './tiers.js'

/** A lesson id: a letter plus digits. */
export const LESSON_ID_PATTERN = '^[a-z][0-9]+$'

/** The slug, as a JSON Schema / ECMAScript pattern string. */
export const SLUG_PATTERN = `^(${TIER_IDS.join('|')})/[a-z][0-9]+-[a-z0-9]+(-[a-z0-9]+)*$`

export const SLUG = new RegExp(SLUG_PATTERN)
