/**
 * The targets the service is held to, checked against the SQLite results (service on one
 * core): each scenario's share of the ceiling's req/s (and, for the catalog GETs, of the header
 * reference's), p99 of the open-loop rows, the server's RSS once every key is cached, and the time
 * from start to ready on the existing dataset. The per-scenario targets are declared with the
 * scenarios (lib/scenarios.mjs).
 */
/** RSS with every key of the dataset (50,000) cached, before any scenario. */
export const RSS_LIMIT_MB = 150
/** Spawn to the first /readyz 200 on an existing database of the bench's size (2M progress rows). */
export const READY_LIMIT_MS = 300

/** req/s per CPU-second of `row` over the same for `reference`: steadier than req/s on a shared machine. */
function perCpuShare(row, reference) {
  if (!(row.serverCpu > 0) || !(reference.serverCpu > 0)) return '-'
  return (row.rps / row.serverCpu / (reference.rps / reference.serverCpu)).toFixed(2)
}

/**
 * `memory`: RSS at ready and once the key cache held `keys` keys (MB), of the first one-core
 * service group; undefined when none ran. A check's `met` is undefined for a figure shown for
 * information only.
 */
export function checkTargets({ rows, ready, memory }) {
  const checks = []
  const sqlite = rows.filter((row) => row.engine === 'sqlite' && row.scenario.target !== undefined)
  const headerReference = rows.find((row) => row.scenario.id === 'header-reference')
  for (const row of sqlite) {
    const { target } = row.scenario
    if (target.ratio !== undefined) {
      checks.push({
        target: `${row.scenario.title}: >= ${target.ratio.toFixed(2)} x ceiling req/s`,
        measured: `${row.ratio.toFixed(2)} (${Math.round(row.rps).toLocaleString('en')} req/s; per CPU ${row.cpuRatio?.toFixed(2) ?? '-'})`,
        met: row.ratio >= target.ratio,
      })
    }
    if (target.headerRatio !== undefined) {
      const share = headerReference === undefined ? undefined : row.rps / headerReference.rps
      checks.push({
        target: `${row.scenario.title}: >= ${target.headerRatio.toFixed(2)} x header reference req/s`,
        measured:
          share === undefined
            ? 'not measured (no header reference row in this run)'
            : `${share.toFixed(2)} (header reference ${Math.round(headerReference.rps).toLocaleString('en')} req/s; per CPU ${perCpuShare(row, headerReference)})`,
        met: share !== undefined && share >= target.headerRatio,
      })
    }
    if (target.p99Ms !== undefined) {
      const late = row.openLoop?.sendLagMs
      const floor = rows.find((r) => r.scenario.tailReferenceOf === row.scenario.id)
      checks.push({
        target: `${row.scenario.title}: p99 < ${target.p99Ms} ms`,
        measured:
          `${row.latencyMs.p99.toFixed(2)} ms (p99.9 ${row.latencyMs.p999.toFixed(2)}, max ${row.latencyMs.max.toFixed(1)} ms` +
          `${late === undefined ? '' : `; sent late by p99 ${late.p99.toFixed(2)} ms`}` +
          `${floor === undefined ? '' : `; the bare server as busy per request at the same rate: p99 ${floor.latencyMs.p99.toFixed(2)}, max ${floor.latencyMs.max.toFixed(1)} ms`})`,
        met: row.latencyMs.p99 < target.p99Ms,
      })
    }
  }
  const withErrors = rows.filter((row) => row.errors > 0)
  checks.push({
    target: 'every response has the expected status (no errors in any scenario)',
    measured:
      withErrors.length === 0
        ? 'none'
        : withErrors.map((row) => `${row.scenario.id} (${row.engine}): ${row.errors}`).join(', '),
    met: withErrors.length === 0,
  })
  if (memory !== undefined) {
    checks.push({
      target: `RSS with ${memory.keys.toLocaleString('en')} keys cached (before any scenario) <= ${RSS_LIMIT_MB} MB`,
      measured: `${memory.afterFillMb.toFixed(0)} MB (${memory.atReadyMb.toFixed(0)} MB at ready)`,
      met: memory.afterFillMb <= RSS_LIMIT_MB,
    })
  }
  const peaks = sqlite.filter((row) => row.peakRssMb !== undefined)
  if (peaks.length > 0) {
    const worst = peaks.reduce((a, b) => (b.peakRssMb > a.peakRssMb ? b : a))
    // Not a target: the pages of the database file the writing connection maps count in RSS
    // although they are the operating system's shared, reclaimable file cache.
    checks.push({
      target: 'peak RSS under load (with the database pages the writer maps)',
      measured: `${worst.peakRssMb.toFixed(0)} MB (${worst.scenario.id})`,
      met: undefined,
    })
  }
  const starts = ready.filter((start) => start.engine === 'sqlite')
  if (starts.length > 0) {
    const slowest = Math.max(...starts.map((start) => start.ms))
    checks.push({
      target: `ready (/readyz 200) <= ${READY_LIMIT_MS} ms after start, existing 2M-row database`,
      measured: `${starts.map((start) => Math.round(start.ms)).join(', ')} ms (${starts.length} starts; slowest counts)`,
      met: slowest <= READY_LIMIT_MS,
    })
  }
  return checks
}
