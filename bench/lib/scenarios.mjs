/**
 * The scenarios: what each one requests, which statuses count as correct, and the target it is
 * held to (a share of the ceiling's req/s, measured on SQLite with the service on one core).
 * Every scenario but the hammer takes its keys in turn from all 50,000, so no key comes near
 * its 100-a-minute limit (at 20,000 req/s each key sees 24 requests a minute).
 */

/** Catalog scenarios, run on both engines. */
export function catalogScenarios({ files, slug, etag }) {
  const catalog = (id, title, path, target, extra = {}) => ({
    id,
    title,
    lua: { mode: 'catalog', file: files.keys, path, ...extra },
    expect: extra.etag === undefined ? [200] : [304],
    target,
  })
  return [
    catalog('tiers', 'GET /api/v1/tiers', '/api/v1/tiers', { ratio: 0.8 }),
    catalog('lessons', 'GET /api/v1/lessons', '/api/v1/lessons', { ratio: 0.8 }),
    catalog('lessons-tier', 'GET /api/v1/lessons?tier=builder', '/api/v1/lessons?tier=builder', { ratio: 0.8 }),
    catalog('lesson', 'GET /api/v1/lessons/<slug>', `/api/v1/lessons/${slug}`, { ratio: 0.8 }),
    catalog('tiers-304', 'GET /api/v1/tiers, If-None-Match (304)', '/api/v1/tiers', { ratio: 0.85 }, { etag }),
  ]
}

export function progressScenario({ files }) {
  return {
    id: 'progress',
    title: 'GET /api/v1/students/<id>/progress',
    lua: { mode: 'progress', file: files.pairs },
    expect: [200],
    target: { ratio: 0.5, p99Ms: 10 },
  }
}

/**
 * The progress read again, measured by Node's HTTP client instead of wrk (see
 * latency-client.mjs): same connections, keys and students; a check on wrk's latency tail.
 */
export function progressCrossCheck({ files }) {
  return {
    ...progressScenario({ files }),
    id: 'progress-node-client',
    title: 'GET /api/v1/students/<id>/progress (Node client, latency cross-check)',
    client: 'node',
    target: { p99Ms: 10 },
  }
}

export function enrollScenario({ files }) {
  return {
    id: 'enroll',
    title: 'POST /api/v1/students/<id>/enroll',
    lua: { mode: 'enroll', file: files.pairs },
    expect: [200],
    target: { ratio: 0.3 },
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
    target: { ratio: 0.85 },
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
