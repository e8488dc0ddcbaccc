/**
 * Waits for a condition instead of sleeping a fixed time and hoping it was enough: looks at it
 * every `intervalMs` until it holds, and fails once `timeoutMs` has passed without it. A wait
 * that is long enough on a loaded machine costs nothing on an idle one.
 */
export interface WaitOptions {
  /** How long to keep looking before failing (ms); 10 s by default. */
  timeoutMs?: number
  /** How long between two looks (ms); 20 by default. */
  intervalMs?: number
  /** What is awaited, for the failure's message. */
  what?: string
}

/** Resolves with the milliseconds waited once `condition` holds; rejects when it did not within `timeoutMs`. */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  { timeoutMs = 10_000, intervalMs = 20, what = 'the condition' }: WaitOptions = {},
): Promise<number> {
  const started = Date.now()
  for (;;) {
    if (await condition()) return Date.now() - started
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not seen within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, intervalMs))
  }
}
