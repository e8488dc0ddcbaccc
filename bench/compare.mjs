/**
 * Two builds side by side, rounds interleaved so that the machine's other load falls on both:
 *
 *   node bench/compare.mjs <other checkout> [--only tiers,lessons,lesson,tiers-304,bad-key-401,progress,enroll]
 *                          [--rounds 3] [--seconds 5]
 *                          [--references] [--keys 2000]
 *
 * Each side runs its own dist/server.js on its own copy of its bench dataset (bench/.data/rows-2m,
 * made by `npm run bench` in that checkout: the migrations may differ), pinned as the bench pins
 * the service. Prints, per scenario, each side's median req/s and req/s per CPU-second of the
 * server, and the ratio of this checkout to the other. Run `npm run build` in both first.
 *
 * --references adds, in every round, the bench's ceiling server (ceiling-server.mjs: the same
 * body with no work and four headers) and its header reference (the same with every header the
 * service sends), and prints this checkout's req/s as a share of each: the catalog targets.
 */
import fs from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { benchSettings, measure } from './lib/measure.mjs'
import { BENCH_DIR, DATA_DIR, ROOT } from './lib/paths.mjs'
import { SERVER_CPU } from './lib/pinning.mjs'
import { serviceEnv, startServer } from './lib/server-process.mjs'
import { keyCacheFill } from './lib/scenarios.mjs'
import { ensureWrk, runWrk } from './lib/wrk.mjs'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    only: { type: 'string', default: 'tiers,lessons,lesson' },
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '5' },
    references: { type: 'boolean', default: false },
    // More keys spread the per-key state over more memory (the full bench uses all 50,000).
    keys: { type: 'string', default: '2000' },
  },
})
if (positionals.length !== 1) {
  console.error('usage: node bench/compare.mjs <other checkout> [--only ids] [--rounds n] [--seconds s]')
  process.exit(2)
}
ensureWrk()

function side(root, label) {
  const data = path.join(root, 'bench', '.data', 'rows-2m')
  const database = path.join(data, 'dataset.db')
  if (!fs.existsSync(database)) throw new Error(`${label}: no dataset at ${database}; run npm run bench there once`)
  const copy = path.join(data, 'compare.db')
  // 2,000 keys by default: all cached after the warm-up, so the rows measure the cached path alone (the
  // key-cache fill is a scenario of its own in the full bench), with the per-key limit lifted.
  const keys = path.join(data, 'compare-keys.txt')
  fs.writeFileSync(
    keys,
    `${fs.readFileSync(path.join(data, 'keys.txt'), 'utf8').split('\n').slice(0, Number(values.keys)).join('\n')}\n`,
  )
  // The pairs ("key student") of those keys, for the progress and enroll rows.
  const chosenKeys = new Set(fs.readFileSync(keys, 'utf8').split('\n').filter(Boolean))
  const pairs = path.join(data, 'compare-pairs.txt')
  const pairLines = fs.readFileSync(path.join(data, 'pairs.txt'), 'utf8').split('\n')
  fs.writeFileSync(pairs, `${pairLines.filter((line) => chosenKeys.has(line.split(' ')[0])).join('\n')}\n`)
  return { label, root, database, copy, keys, pairs, badKeys: path.join(data, 'bad-keys.txt') }
}

/** The tiers' ETag as the side's own server gives it (a reference server gets this checkout's). */
async function etagOf(s, baseUrl) {
  if (s.etag === undefined) {
    const key = fs.readFileSync(s.keys, 'utf8').split('\n', 1)[0]
    const tiers = await fetch(`${baseUrl}/api/v1/tiers`, { headers: { authorization: `Bearer ${key}` } })
    s.etag = tiers.headers.get('etag')
  }
  return s.etag
}

const sides = [side(path.resolve(positionals[0]), 'other'), side(ROOT, 'this')]
const ceilingFile = path.join(DATA_DIR, 'ceiling-response.json')
if (values.references) {
  sides.push(
    { label: 'ceiling', script: path.join(BENCH_DIR, 'ceiling-server.mjs'), env: {} },
    { label: 'headers', script: path.join(BENCH_DIR, 'ceiling-server.mjs'), env: { CEILING_HEADERS: 'service' } },
  )
}
const slug = 'explorer/e1-robots-follow-instructions'
const scenarios = {
  tiers: { path: '/api/v1/tiers', expect: [200] },
  lessons: { path: '/api/v1/lessons', expect: [200] },
  'lessons-tier': { path: '/api/v1/lessons?tier=builder', expect: [200] },
  lesson: { path: `/api/v1/lessons/${slug}`, expect: [200] },
  // With the ETag of this checkout's tiers (each side's own when they differ: see etagOf).
  'tiers-304': { path: '/api/v1/tiers', expect: [304], etag: true },
  // Well-formed keys never issued; the services run with a high AUTH_FAILURE_LIMIT, as the bench's 401 row.
  'bad-key-401': { path: '/api/v1/tiers', expect: [401], badKeys: true },
  // Student rows: no reference server answers them (the bench's own references do; run.mjs).
  progress: { mode: 'progress', expect: [200], service: true },
  enroll: { mode: 'enroll', expect: [200], service: true },
}
const chosen = values.only.split(',').filter((id) => scenarios[id] !== undefined)
const settings = { ...benchSettings(), duration: Number(values.seconds), warmup: 2 }
const results = new Map()

for (let round = 0; round < Number(values.rounds); round++) {
  // Alternate which side goes first, so neither always runs on a warmer or quieter machine.
  const order = round % 2 === 0 ? sides : [...sides].reverse()
  for (const s of order) {
    const reference = s.root === undefined
    if (!reference) {
      fs.copyFileSync(s.database, s.copy)
      for (const suffix of ['-wal', '-shm']) fs.rmSync(s.copy + suffix, { force: true })
    }
    const server = await startServer(
      reference
        ? {
            label: s.label,
            env: { ...process.env, ...s.env, CEILING_RESPONSE: ceilingFile },
            cpu: SERVER_CPU,
            script: s.script,
          }
        : {
            label: s.label,
            env: serviceEnv({ DATABASE_URL: `sqlite:${s.copy}`, RATE_LIMIT: '1000000', AUTH_FAILURE_LIMIT: '1000000' }),
            cpu: SERVER_CPU,
            script: path.join(s.root, 'dist', 'server.js'),
          },
    )
    try {
      if (s.label === 'this' && values.references) await writeCeilingResponse(server.baseUrl, s.keys)
      // As the full bench does: one request per key first, so that every key is cached.
      if (!reference && Number(values.keys) > 2000) {
        const fill = keyCacheFill({ file: s.keys, count: Number(values.keys) })
        await runWrk({
          baseUrl: server.baseUrl,
          seconds: 600,
          connections: settings.connections,
          lua: { ...fill.lua, limit: fill.count },
          expect: fill.expect,
        })
      }
      for (const id of chosen) {
        const scenario = scenarios[id]
        if (reference && scenario.service) continue
        const keys = scenario.badKeys ? 'badKeys' : 'keys'
        const file = reference ? sides[1][keys] : s[keys]
        const etag = scenario.etag ? await etagOf(reference ? sides[1] : s, server.baseUrl) : undefined
        const lua =
          scenario.mode === undefined
            ? { mode: 'catalog', file, path: scenario.path, ...(etag === undefined ? {} : { etag }) }
            : { mode: scenario.mode, file: s.pairs }
        const row = await measure(server, { lua, expect: scenario.expect }, settings)
        const key = `${id}/${s.label}`
        if (!results.has(key)) results.set(key, [])
        results.get(key).push({ rps: row.rps, perCpu: row.rps / Math.max(row.serverCpu ?? 1, 0.01) })
        console.error(
          `round ${round + 1} ${s.label} ${id}: ${Math.round(row.rps)} req/s at ${Math.round((row.serverCpu ?? 0) * 100)}% CPU, ` +
            `statuses ${JSON.stringify(row.statuses)}, errors ${row.errors}`,
        )
      }
    } finally {
      await server.stop()
    }
  }
}

/** The body the reference servers answer with: this checkout's own /api/v1/tiers. */
async function writeCeilingResponse(baseUrl, keysFile) {
  const key = fs.readFileSync(keysFile, 'utf8').split('\n', 1)[0]
  const tiers = await fetch(`${baseUrl}/api/v1/tiers`, { headers: { authorization: `Bearer ${key}` } })
  const response = {
    contentType: tiers.headers.get('content-type'),
    etag: tiers.headers.get('etag'),
    body: await tiers.text(),
  }
  fs.writeFileSync(ceilingFile, JSON.stringify(response))
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
console.log(
  `| scenario | other req/s | this req/s | other req/s per CPU | this req/s per CPU | this / other (per CPU) |`,
)
console.log('| --- | --- | --- | --- | --- | --- |')
for (const id of chosen) {
  const [a, b] = ['other', 'this'].map((label) => results.get(`${id}/${label}`))
  const [ar, br, ac, bc] = [
    a.map((r) => r.rps),
    b.map((r) => r.rps),
    a.map((r) => r.perCpu),
    b.map((r) => r.perCpu),
  ].map(median)
  console.log(
    `| ${id} | ${Math.round(ar).toLocaleString('en')} | ${Math.round(br).toLocaleString('en')} | ${Math.round(ac).toLocaleString('en')} | ${Math.round(bc).toLocaleString('en')} | ${(bc / ac).toFixed(2)} |`,
  )
}

if (values.references) {
  console.log('\n| scenario | this / ceiling (req/s) | this / header reference (req/s) | header reference / ceiling |')
  console.log('| --- | --- | --- | --- |')
  for (const id of chosen.filter((id) => !scenarios[id].service)) {
    const [service, ceiling, headers] = ['this', 'ceiling', 'headers'].map((label) =>
      median(results.get(`${id}/${label}`).map((r) => r.rps)),
    )
    console.log(
      `| ${id} | ${(service / ceiling).toFixed(2)} | ${(service / headers).toFixed(2)} | ${(headers / ceiling).toFixed(2)} |`,
    )
  }
}
