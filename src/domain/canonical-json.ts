/**
 * JSON in the canonical form of RFC 8785 (JSON Canonicalization Scheme): no whitespace, object
 * members sorted by their names' UTF-16 code units, strings and numbers as ECMAScript serializes
 * them. A signature over these bytes survives the document being re-indented or its members
 * reordered, and anyone can rebuild them (docs/end-of-agreement.md says how).
 */

export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [name: string]: JsonValue }

export function canonicalJson(value: JsonValue): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (typeof value === 'object' && value !== null) {
    const object = value as { readonly [name: string]: JsonValue }
    // Array.prototype.sort compares UTF-16 code units, which is the order RFC 8785 section 3.2.3 asks for.
    const names = Object.keys(object).sort()
    return `{${names.map((name) => `${JSON.stringify(name)}:${canonicalJson(object[name]!)}`).join(',')}}`
  }
  if (typeof value === 'number' && !Number.isFinite(value)) throw new Error('JSON has no NaN or Infinity')
  return JSON.stringify(value)
}

/** The same value with every object's members in canonical order, for a file people read. */
export function sortedJson(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(sortedJson)
  if (typeof value === 'object' && value !== null) {
    const object = value as { readonly [name: string]: JsonValue }
    return Object.fromEntries(
      Object.keys(object)
        .sort()
        .map((name) => [name, sortedJson(object[name]!)]),
    )
  }
  return value
}
