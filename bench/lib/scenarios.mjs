/**
 * The scenarios: what each one requests, which statuses count as correct, and the target it is
 * held to, checked on SQLite with the service on one core (lib/targets.mjs):
 * - `ratio`: a share of the ceiling's req/s;
 * - `headerRatio`: a share of the header reference's req/s (the bare server sending the
 *   headers every service 200 carries);
 * - `p99Ms`: p99 latency under that, on an open-loop row (a fixed rate, half the path's peak).
 * Every scenario but the hammer takes its keys in turn from all 50,000, so no key comes near
 * its 100-a-minute limit (at 20,000 req/s each key sees 24 requests a minute).
 */
import { sizeLabel } from './disclosure-dataset.mjs'

/** Open-loop rows run at this share of the peak req/s measured just before on the same server. */
export const OPEN_LOOP_SHARE = 0.5
export const OPEN_LOOP_P99_MS = 10

/** Catalog scenarios, run on both engines. */
export function catalogScenarios({ files, slug, etag }) {
  const catalog = (id, title, path, target, extra = {}) => ({
    id,
    title,
    lua: { mode: 'catalog', file: files.keys, path, ...extra },
    expect: extra.etag === undefined ? [200] : [304],
    target,
  })
  const get = { ratio: 0.75, headerRatio: 0.9 }
  return [
    catalog('tiers', 'GET /api/v1/tiers', '/api/v1/tiers', get),
    catalog('lessons', 'GET /api/v1/lessons', '/api/v1/lessons', get),
    catalog('lessons-tier', 'GET /api/v1/lessons?tier=builder', '/api/v1/lessons?tier=builder', get),
    catalog('lesson', 'GET /api/v1/lessons/<slug>', `/api/v1/lessons/${slug}`, get),
    catalog('tiers-304', 'GET /api/v1/tiers, If-None-Match (304)', '/api/v1/tiers', { ratio: 0.8 }, { etag }),
  ]
}

/** ", 2M rows in the disclosure log" for a scenario run on a log of that size; nothing without one. */
function logSuffix(disclosureRows) {
  return disclosureRows === undefined ? '' : `, ${sizeLabel(disclosureRows)} rows in the disclosure log`
}

/**
 * Progress reads. `disclosureRows`: the rows the log held when the server started (a copy from
 * disclosure-dataset.mjs); `held`: whether this is the size the target applies to (the largest).
 */
export function progressScenario({ files, disclosureRows, held = false }) {
  return {
    id: 'progress',
    title: `GET /api/v1/students/<id>/progress${logSuffix(disclosureRows)}`,
    lua: { mode: 'progress', file: files.pairs },
    expect: [200],
    disclosureRows,
    target: held ? { ratio: 0.2 } : undefined,
  }
}

/**
 * The progress read again, measured by Node's HTTP client instead of wrk (see
 * latency-client.mjs): same connections, keys and students; a check on wrk's latency tail.
 */
export function progressCrossCheck({ files, disclosureRows }) {
  return {
    ...progressScenario({ files, disclosureRows }),
    id: 'progress-node-client',
    title: `GET /api/v1/students/<id>/progress${logSuffix(disclosureRows)} (Node client, latency cross-check)`,
    client: 'node',
  }
}

export function enrollScenario({ files, disclosureRows, held = false }) {
  return {
    id: 'enroll',
    title: `POST /api/v1/students/<id>/enroll${logSuffix(disclosureRows)}`,
    lua: { mode: 'enroll', file: files.pairs },
    expect: [200],
    disclosureRows,
    target: held ? { ratio: 0.2 } : undefined,
  }
}

/**
 * The same requests at a fixed rate, OPEN_LOOP_SHARE of the req/s that `closed` (a scenario of
 * the same group, measured before it) reached: latency from each request's due time (see
 * latency-client.mjs). The rate and title are settled once that peak is known (`openLoopAt`).
 */
export function openLoopScenario(closed) {
  return {
    ...closed,
    id: `${closed.id}-open`,
    openLoop: { of: closed.id, share: OPEN_LOOP_SHARE },
    target: { p99Ms: OPEN_LOOP_P99_MS },
  }
}

/** An open-loop scenario with its rate, from the peak req/s of the closed-loop row it follows. */
export function openLoopAt(scenario, peakRps) {
  const rate = Math.max(1, Math.round(peakRps * scenario.openLoop.share))
  return {
    ...scenario,
    rate,
    title: `${scenario.title}, open loop at ${Math.round(scenario.openLoop.share * 100)}% of peak (${rate.toLocaleString('en')} req/s)`,
  }
}

/**
 * A student scenario against a reference server (bench/reference-sqlite-server.mjs, or with
 * `postgres` reference-postgres-server.mjs): the same requests, wrk script and data; no target
 * (it is what the service is compared with).
 */
export function referenceScenario(scenario, { postgres = false } = {}) {
  const server = postgres ? 'node:http + node-postgres, same SQL' : 'node:http + better-sqlite3, same SQL, group commit'
  return {
    ...scenario,
    id: `reference-${scenario.id}`,
    title: `reference: ${server} (${scenario.id})${logSuffix(scenario.disclosureRows)}`,
    target: undefined,
  }
}

/** One key, far over its limit: after its first 100 requests (in the warm-up) every answer is 429. */
export function hammerScenario({ hammerKey }) {
  return {
    id: 'hammer-429',
    title: 'one key over its limit (429)',
    lua: { mode: 'hammer', key: hammerKey, path: '/api/v1/tiers' },
    expect: [200, 429],
    keys: 'one',
    target: { ratio: 0.8 },
  }
}

/**
 * Well-formed keys (valid checksum) that were never issued. Needs a server started with a
 * high AUTH_FAILURE_LIMIT, or after 30 failures a minute the address gets 429 instead of 401.
 */
export function badKeyScenario({ files }) {
  return {
    id: 'bad-key-401',
    title: 'unknown well-formed keys (401)',
    lua: { mode: 'catalog', file: files.badKeys, path: '/api/v1/tiers' },
    expect: [401],
    target: { ratio: 0.8 },
  }
}

/** One request per key: fills the service's key cache (see scenario-group.mjs). */
export function keyCacheFill({ file, count, expect = [200] }) {
  return { lua: { mode: 'catalog', file, path: '/api/v1/tiers' }, count, expect }
}

/** The ceiling server answers any request; it gets the tiers requests, keys and all. */
export function ceilingScenario({ files }) {
  return {
    id: 'ceiling',
    title: 'ceiling: node:http, same body, no auth',
    lua: { mode: 'catalog', file: files.keys, path: '/api/v1/tiers' },
    expect: [200],
  }
}
