/**
 * The fast path's one progress renderer: the bytes the route's serializer writes for
 * `progressView` of the same rows (a test compares them), written straight from the rows as
 * read, without making an object per entry and walking the schema for each field, which took a
 * large part of a whole read, SQL included (figures: docs/performance.md).
 *
 * Only for plain rows (`StudentRows.plain`: every string printable ASCII with nothing to escape)
 * whose numbers are whole; for anything else the route's schema serializer writes the body. The
 * first name is the one string that may need escaping or be in any script.
 */
import fastJson from 'fast-json-stringify'
import { type CatalogIndex, progressView, tierOfSlug } from '../../domain/progress.js'
import { progressOfRows, type StudentRows } from '../../storage/student-repository.js'
import { type ByteString, byteString } from '../byte-string.js'
import { ProgressEntrySchema, StudentProgressSchema } from '../schemas/students.js'

/** The progress body of `student`: written from plain rows, else by the schema's serializer. */
export type ProgressRenderer = (id: string, student: StudentRows, catalog: CatalogIndex) => ByteString

export function progressRenderer(): ProgressRenderer {
  const serialize = fastJson(StudentProgressSchema, { schema: { ProgressEntry: ProgressEntrySchema } })
  return (id, student, catalog) =>
    progressBody(id, student, catalog) ?? byteString(serialize(progressView(progressOfRows(id, student), catalog)))
}

/** The body written from plain rows with whole numbers; undefined for any other rows. */
export function progressBody(id: string, student: StudentRows, catalog: CatalogIndex): ByteString | undefined {
  const { rows, tier } = student
  if (!student.plain) return undefined
  const count = rows.length
  // Catalog order (sortInCatalogOrder): by position, lessons that left the catalog last, then by slug.
  const ranks = new Array<number>(count)
  const order = new Array<number>(count)
  for (let i = 0; i < count; i++) {
    ranks[i] = catalog.position(rows[i]![0]) ?? Number.MAX_SAFE_INTEGER
    order[i] = i
  }
  order.sort((a, b) => {
    const slugA = rows[a]![0]
    const slugB = rows[b]![0]
    return ranks[a]! - ranks[b]! || (slugA < slugB ? -1 : slugA > slugB ? 1 : 0)
  })
  let entries = ''
  let completedLessons = 0
  let totalXp = 0
  let totalTimeSeconds = 0
  for (let i = 0; i < count; i++) {
    const [lessonSlug, status, xp, timeSeconds, startedAt, completedAt] = rows[order[i]!]!
    if (!Number.isSafeInteger(xp) || !Number.isSafeInteger(timeSeconds)) return undefined
    totalXp += xp
    totalTimeSeconds += timeSeconds
    if (status === 'completed' && tierOfSlug(lessonSlug) === tier) completedLessons++
    const completed = completedAt === null ? 'null' : `"${completedAt}"`
    entries +=
      `${i === 0 ? '' : ','}{"lessonSlug":"${lessonSlug}","status":"${status}","xp":${xp},` +
      `"timeSeconds":${timeSeconds},"startedAt":"${startedAt}","completedAt":${completed}}`
  }
  // The id is a canonical UUID (the URL's); name and tier are stored strings, written as JSON writes them.
  const head = byteString(
    `{"profileId":"${id}","displayName":${JSON.stringify(student.firstName)},"tier":${JSON.stringify(tier)}`,
  )
  const summary =
    `{"totalLessons":${catalog.lessonCount(tier)},"completedLessons":${completedLessons},` +
    `"totalXp":${totalXp},"totalTimeSeconds":${totalTimeSeconds}}`
  return `${head},"progress":[${entries}],"summary":${summary}}` as ByteString
}
