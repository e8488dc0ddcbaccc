/**
 * How a lesson's standard is named from outside: by a framework's code (`1B-AP-08`) or by the
 * CASE identifier of that code's item (a UUID), as `GET /api/v1/lessons?standard=` takes it and
 * as the catalog indexes it. Codes are compared exactly; identifiers in either case, as RFC 9562
 * reads a UUID.
 */
import { isUuid } from './uuid.js'

/** A framework's name: the keys of a lesson's `standards` (`csta`) and the name of its CASE map. */
export const FRAMEWORK_NAME = /^[a-z][a-z0-9-]{0,31}$/

/** The longest `standard` value accepted: the catalog's codes are at most 40 characters, a UUID 36. */
export const STANDARD_REFERENCE_MAX_LENGTH = 64

/**
 * What a value may be made of: letters, digits, `.`, `-`, `_` and `:`, starting with a letter or
 * digit. Every character stands for itself in a URL's query, so the fast path's exact match and the
 * router's decoded value agree.
 */
export const STANDARD_REFERENCE = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/

/** Whether `value` can name a standard at all (its length and characters). */
export function isStandardReference(value: string): boolean {
  return value.length <= STANDARD_REFERENCE_MAX_LENGTH && STANDARD_REFERENCE.test(value)
}

/** The key a reference is looked up by: an identifier in lower case, a code as written. */
export function standardKey(value: string): string {
  return isUuid(value) ? value.toLowerCase() : value
}
