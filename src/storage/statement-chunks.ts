/** Rows or ids per statement: under both engines' bound-parameter limits with room to spare. */
export const STATEMENT_CHUNK = 500

/** `items` in slices of one statement's worth, in order. */
export function* chunks<T>(items: readonly T[]): Generator<T[]> {
  for (let i = 0; i < items.length; i += STATEMENT_CHUNK) yield items.slice(i, i + STATEMENT_CHUNK)
}
