/**
 * Operations announced for removal (docs/versioning.md), and the rule of their two dates: the
 * policy promises at least six months between an operation's deprecation and its sunset, so a
 * deprecation that gives less is refused when it is made, not found out by a partner. What an
 * answer of a deprecated operation carries (http/deprecation.ts) and who is mailed about it
 * (cases/due-notices.ts) follow from the entry.
 */

/** When an operation is deprecated and when it may go, with the headers that say so. */
export interface Deprecation {
  /** Day (or instant) of the deprecation, ISO 8601. */
  readonly deprecatedAt: string
  /** Day (or instant) after which the operation may be removed, ISO 8601. */
  readonly sunsetAt: string
  readonly headers: Readonly<{ deprecation: string; sunset: string; link: string }>
}

/** The months the policy promises between an operation's deprecation and its sunset. */
export const NOTICE_MONTHS = 6

/** Where deprecations are announced (a relative reference: RFC 8288 resolves it), as RFC 9745 section 3 links it. */
const CHANGELOG_LINK = '</docs/changelog>; rel="deprecation"; type="text/html"'

/** The `Deprecation` field of RFC 9745 section 2: `@` and the Unix time in seconds. */
export const deprecationField = (at: Date): string => `@${Math.floor(at.getTime() / 1000)}`

/** The `Sunset` field of RFC 8594 section 3: an HTTP-date. */
export const sunsetField = (at: Date): string => at.toUTCString()

function instant(name: string, value: string): Date {
  const date = new Date(value)
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(date.getTime()))
    throw new Error(`${name} must be an ISO 8601 date, not ${JSON.stringify(value)}`)
  return date
}

/**
 * A deprecation from its two dates, checked now.
 *
 * @example
 * deprecation({ deprecatedAt: '2027-01-04', sunsetAt: '2027-07-05' }).headers.sunset
 * // 'Mon, 05 Jul 2027 00:00:00 GMT'
 */
export function deprecation(dates: { deprecatedAt: string; sunsetAt: string }): Deprecation {
  const deprecated = instant('deprecatedAt', dates.deprecatedAt)
  const sunset = instant('sunsetAt', dates.sunsetAt)
  const earliest = new Date(deprecated)
  earliest.setUTCMonth(earliest.getUTCMonth() + NOTICE_MONTHS)
  if (sunset < earliest)
    throw new Error(
      `sunsetAt ${dates.sunsetAt} is less than ${NOTICE_MONTHS} months after deprecatedAt ${dates.deprecatedAt}`,
    )
  return Object.freeze({
    deprecatedAt: dates.deprecatedAt,
    sunsetAt: dates.sunsetAt,
    headers: Object.freeze({
      deprecation: deprecationField(deprecated),
      sunset: sunsetField(sunset),
      link: CHANGELOG_LINK,
    }),
  })
}

/**
 * Operations announced for removal, by the router's method and path (`GET /api/v1/students/:id/progress`,
 * `GET /api/v1/lessons/*`), each with `deprecation(...)`. Empty: no operation of v1 is deprecated.
 */
export const DEPRECATED_OPERATIONS: Readonly<Record<string, Deprecation>> = Object.freeze({})
