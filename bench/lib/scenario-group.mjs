/**
 * Runs scenarios against one server configuration so that each measures its own path, under
 * the same conditions as the others. Two things in the service would otherwise decide a row's
 * numbers by where it happens to fall in the run:
 *
 * - The key cache. The service keeps each key record for a while (KeyCache maxAgeMs in
 *   src/services/key-cache.ts; 60 s when this was written) and the scenarios rotate over all
 *   50,000 keys. So each cycle starts a fresh server and fills its cache with one request per
 *   key (the "key-cache fill", reported as its own row: the cost of a key's first request), then
 *   runs the scenarios that end before the first cached entry expires; then the next cycle
 *   starts another server.
 * - The key-usage flush. Every USAGE_FLUSH_MS (src/app.ts) the service writes key usage; on
 *   SQLite that blocked the event loop for seconds with 50,000 keys in use. With `avoidFlush`
 *   the measured runs are placed between flushes (the warm-up absorbs them), and the longest
 *   wait seen during a warm-up that spanned a flush is reported.
 */
import { runWrk } from './wrk.mjs'
import { measure } from './measure.mjs'
import { processTree, rssMb } from './process-stats.mjs'
import { keyCacheSeconds, usageFlushSeconds } from './service-constants.mjs'

/** Used when the build does not say how long keys stay cached. */
const DEFAULT_KEY_CACHE_SECONDS = 60
const EXPIRY_SAFETY_SECONDS = 2
/** Starting wrk (and its script reading 100,000 lines) makes each run start a little late. */
const WRK_START_SECONDS = 1
const FILL_TIMEOUT_SECONDS = 600
/** The flush timer starts in buildApp, a little before /readyz answers. */
const FLUSH_MARGIN_BEFORE_SECONDS = 1
/** How long a flush may keep the loop busy (about 2 s for 50,000 keys on this machine). */
const FLUSH_MARGIN_AFTER_SECONDS = 5

/** Blocked intervals [from, to] of the flushes, in seconds after ready. */
function flushBlock(k, period) {
  return [k * period - FLUSH_MARGIN_BEFORE_SECONDS, k * period + FLUSH_MARGIN_AFTER_SECONDS]
}

/** The earliest start >= `earliest` whose run of `duration` overlaps no flush. */
function clearStart(earliest, duration, period) {
  if (period === undefined) return earliest
  let start = earliest
  for (;;) {
    const k = Math.max(1, Math.floor((start - FLUSH_MARGIN_AFTER_SECONDS) / period) + 1)
    const [from, to] = flushBlock(k, period)
    if (from < start + duration && to > start) start = to
    else return start
  }
}

/**
 * The warm-up (whole seconds, at least the configured one) after which a measured run of
 * `duration` starting `sinceReady` seconds after the server was ready misses every flush.
 */
export function flushFreeWarmup(sinceReady, settings) {
  const start = clearStart(sinceReady + settings.warmup, settings.duration + WRK_START_SECONDS, usageFlushSeconds())
  return Math.max(settings.warmup, Math.ceil(start - sinceReady))
}

function spansFlush(from, to, period) {
  if (period === undefined) return false
  for (let k = 1; k * period - FLUSH_MARGIN_BEFORE_SECONDS < to; k++) {
    const [blockFrom, blockTo] = flushBlock(k, period)
    if (blockFrom < to && blockTo > from) return true
  }
  return false
}

/**
 * `refill: false` keeps one server for the whole group after a single fill: the scenarios then
 * see keys expire and be re-read as in steady use (where a refill per pair of scenarios would
 * take longer than the scenarios, as with two workers on PostgreSQL).
 */
export async function runScenarioGroup({
  startServer,
  stopServer,
  scenarios,
  fill,
  settings,
  log,
  measureScenario,
  refill = true,
  avoidFlush = false,
}) {
  const results = { rows: [], fills: [], readies: [], memory: [], flushStallsMs: [] }
  const period = avoidFlush ? usageFlushSeconds() : undefined
  const keyTtl = keyCacheSeconds() ?? DEFAULT_KEY_CACHE_SECONDS
  // RSS of the server (its largest worker under node:cluster).
  const rss = (pid) => {
    const tree = processTree(pid)
    return Math.max(...(tree.length > 1 ? tree.slice(1) : tree).map((p) => rssMb(p) ?? 0))
  }
  let server
  let readyAt = 0
  let fillStarted = 0
  const now = () => (performance.now() - readyAt) / 1000

  const startCycle = async () => {
    if (server !== undefined) await stopServer(server)
    server = await startServer()
    readyAt = performance.now()
    results.readies.push(server.readyMs)
    const atReady = rss(server.pid)
    log(
      `  server started, ready in ${server.readyMs.toFixed(0)} ms; filling the key cache (${fill.count.toLocaleString('en')} requests)`,
    )
    fillStarted = now()
    const row = await runWrk({
      baseUrl: server.baseUrl,
      seconds: FILL_TIMEOUT_SECONDS,
      connections: settings.connections,
      threads: 1,
      lua: { ...fill.lua, limit: fill.count },
      expect: fill.expect,
    })
    results.fills.push(row)
    results.memory.push({ atReadyMb: atReady, afterFillMb: rss(server.pid) })
    log(
      `    fill: ${row.requests.toLocaleString('en')} requests in ${row.seconds.toFixed(1)} s, ${Math.round(row.rps).toLocaleString('en')} req/s, errors ${row.errors}`,
    )
  }
  const plan = () => {
    const from = now()
    const duration = settings.duration + WRK_START_SECONDS
    const start = clearStart(from + settings.warmup, duration, period)
    return { from, start, fits: start + duration <= fillStarted + keyTtl - EXPIRY_SAFETY_SECONDS }
  }

  for (const scenario of scenarios) {
    const needsKeys = scenario.keys !== 'one'
    if (server === undefined) await startCycle()
    let next = plan()
    if (refill && needsKeys && !next.fits) {
      await startCycle()
      next = plan()
    }
    // wrk takes whole seconds: the warm-up runs until the planned start, at least as configured.
    const warmup = Math.max(settings.warmup, Math.ceil(next.start - next.from))
    const row = await measureScenario(server, scenario, (s, sc) => measure(s, sc, { ...settings, warmup }))
    if (spansFlush(next.from, next.from + warmup, period) && row.warmupMaxMs !== undefined)
      results.flushStallsMs.push(row.warmupMaxMs)
    results.rows.push(row)
  }
  if (server !== undefined) await stopServer(server)
  return results
}
