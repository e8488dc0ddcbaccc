/** The reader the load tests keep busy while a long write runs beside the server. */

/** What each read answered: its status, how long it took, and when it was answered (performance.now()). */
export interface ReadLog {
  statuses: number[]
  latencies: number[]
  answeredAt: number[]
}

/** Reads `url` with `headers`, one request after another, for as long as `running()` holds. */
export async function readWhile(
  url: string,
  headers: Record<string, string>,
  running: () => boolean,
  log: ReadLog,
): Promise<void> {
  while (running()) {
    const started = performance.now()
    const res = await fetch(url, { headers })
    await res.arrayBuffer()
    const answered = performance.now()
    log.latencies.push(answered - started)
    log.answeredAt.push(answered)
    log.statuses.push(res.status)
  }
}
