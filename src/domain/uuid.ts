/**
 * A UUID in its canonical text form (RFC 9562 4), either case. Student, organisation and key ids
 * are stored lower-case; compare after `toLowerCase()`.
 */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value)
}
