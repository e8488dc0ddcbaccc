/**
 * Paging by key: a query asks for `limit + 1` rows in key order, and the extra row, when it came,
 * only says that another page follows. `next` is the last kept row's key, where the next page starts.
 */
export function keysetPage<Row extends { id: unknown }>(
  rows: Row[],
  limit: number,
): { rows: Row[]; next: Row['id'] | null } {
  if (rows.length <= limit) return { rows, next: null }
  const kept = rows.slice(0, limit)
  return { rows: kept, next: kept.at(-1)!.id }
}
