/**
 * Where does the time go? Runs one scenario against the service started under
 * `node --cpu-prof` (SQLite, one core, as in the benchmark), then prints the top functions by
 * self time, mapped to src/*.ts lines, counted over the measured run only.
 *
 *   node bench/profile.mjs <scenario> [--no-build] [--cold] [--dataset rows-2m] [--disclosure-rows 2M] [--top 25]
 *                          [--keys 2000] [--env NAME=value ...]
 *
 * --disclosure-rows runs the server on the bench's copy of the dataset whose disclosure log holds
 * that many rows (lib/disclosure-dataset.mjs), as the benchmark does for progress and enroll;
 * without it the log starts empty.
 * As in the benchmark, the key cache is filled (one request per key) before the warm-up;
 * --cold skips that, to profile requests whose key has to be read from storage.
 * Scenarios: tiers, lessons, lessons-tier, lesson, tiers-304, progress, enroll, hammer-429,
 * bad-key-401; and `startup`, which profiles from spawn to the first /readyz 200. BENCH_DURATION and BENCH_WARMUP apply as for `npm run bench`. The .cpuprofile
 * stays in bench/.data/profiles/ (open it in Chrome DevTools or speedscope for flame graphs).
 */
import fs from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { buildService, snapshotDist } from './lib/build-service.mjs'
import { DATA_DIR } from './lib/paths.mjs'
import { ensureWrk, runWrk } from './lib/wrk.mjs'

const SCENARIOS = [
  'tiers',
  'lessons',
  'lessons-tier',
  'lesson',
  'tiers-304',
  'progress',
  'enroll',
  'hammer-429',
  'bad-key-401',
  'startup',
]

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    'no-build': { type: 'boolean', default: false },
    // Skip the key-cache fill: profile requests whose keys are looked up in storage.
    cold: { type: 'boolean', default: false },
    dataset: { type: 'string', default: 'rows-2m' },
    'disclosure-rows': { type: 'string' },
    top: { type: 'string', default: '25' },
    // As bench/compare.mjs measures: only the first N keys, with the per-key limit lifted.
    keys: { type: 'string' },
    // A service setting for the profiled server (e.g. --env METRICS_TOKEN=...), repeatable.
    env: { type: 'string', multiple: true, default: [] },
  },
})
const scenarioId = positionals[0]
if (!SCENARIOS.includes(scenarioId)) {
  console.error(
    `usage: node bench/profile.mjs <scenario> [--no-build] [--cold] [--dataset rows-2m] [--disclosure-rows 2M] [--top 25] [--keys N] [--env NAME=value]\nscenarios: ${SCENARIOS.join(', ')}`,
  )
  process.exit(2)
}

// Either way the server runs from a copy of dist/, as in the benchmark.
if (values['no-build']) snapshotDist()
else buildService()
ensureWrk()
const { benchSettings, describe, measure } = await import('./lib/measure.mjs')
const { ensureSqliteDataset, resetDataset } = await import('./lib/sqlite-dataset.mjs')
const { disclosureSizes, ensureLogDataset } = await import('./lib/disclosure-dataset.mjs')
const { serviceEnv, startServer } = await import('./lib/server-process.mjs')
const { SERVER_CPU } = await import('./lib/pinning.mjs')
const scenarios = await import('./lib/scenarios.mjs')
const { analyseProfile, formatProfile } = await import('./lib/cpu-profile.mjs')
const { flushFreeWarmup } = await import('./lib/scenario-group.mjs')

const settings = benchSettings()
let files = await ensureSqliteDataset(values.dataset)
resetDataset(files.database)
const disclosureRows =
  values['disclosure-rows'] === undefined
    ? undefined
    : disclosureSizes({ BENCH_DISCLOSURE_ROWS: values['disclosure-rows'] }).at(-1)
if (disclosureRows !== undefined) files = await ensureLogDataset(files, disclosureRows)
if (values.keys !== undefined) {
  const count = Number(values.keys)
  const keys = path.join(path.dirname(files.database), `profile-keys-${count}.txt`)
  const chosen = fs.readFileSync(files.keys, 'utf8').split('\n').slice(0, count)
  fs.writeFileSync(keys, `${chosen.join('\n')}\n`)
  // And the progress and enroll pairs of those keys only, as compare.mjs does.
  const wanted = new Set(chosen)
  const pairs = path.join(path.dirname(files.database), `profile-pairs-${count}.txt`)
  const pairLines = fs.readFileSync(files.pairs, 'utf8').split('\n')
  fs.writeFileSync(pairs, `${pairLines.filter((line) => wanted.has(line.split(' ')[0])).join('\n')}\n`)
  files = { ...files, keys, pairs, manifest: { ...files.manifest, keys: count } }
}
const profileDir = path.join(DATA_DIR, 'profiles', `${scenarioId}-${new Date().toISOString().replace(/[:.]/g, '-')}`)
fs.mkdirSync(profileDir, { recursive: true })

const env = serviceEnv({
  DATABASE_URL: `sqlite:${files.database}`,
  ...(scenarioId === 'bad-key-401' ? { AUTH_FAILURE_LIMIT: '1000000' } : {}),
  ...(values.keys !== undefined ? { RATE_LIMIT: '1000000' } : {}),
  ...Object.fromEntries(
    values.env.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  ),
})
// The profile's timestamps and process.hrtime share CLOCK_MONOTONIC (microseconds here).
const nowUs = () => Number(process.hrtime.bigint() / 1000n)
const spawnedUs = nowUs()
const server = await startServer({
  label: 'service (profiled)',
  env,
  cpu: SERVER_CPU,
  nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`],
})
const readyAt = performance.now()
let window
let row
try {
  if (scenarioId === 'startup') {
    window = { fromUs: spawnedUs, toUs: nowUs() }
    console.log(`ready in ${server.readyMs.toFixed(0)} ms under --cpu-prof (spawn to the first /readyz 200)`)
  } else await runScenario()
} finally {
  await server.stop()
}

async function runScenario() {
  const key = fs.readFileSync(files.keys, 'utf8').split('\n', 1)[0]
  const auth = { authorization: `Bearer ${key}` }
  const etag = (await fetch(`${server.baseUrl}/api/v1/tiers`, { headers: auth })).headers.get('etag')
  const lessons = await (await fetch(`${server.baseUrl}/api/v1/lessons`, { headers: auth })).json()
  const context = {
    files,
    disclosureRows,
    etag,
    slug: lessons.lessons[Math.floor(lessons.lessons.length / 2)].slug,
    hammerKey: key,
  }
  const all = [
    ...scenarios.catalogScenarios(context),
    scenarios.progressScenario(context),
    scenarios.enrollScenario(context),
    scenarios.hammerScenario(context),
    scenarios.badKeyScenario(context),
  ]
  const scenario = all.find((s) => s.id === scenarioId)
  if (!values.cold && scenario.keys !== 'one') {
    // As in the benchmark: every key cached first (bench/lib/scenario-group.mjs).
    const bad = scenarioId === 'bad-key-401'
    const fill = scenarios.keyCacheFill({
      file: bad ? files.badKeys : files.keys,
      count: bad ? files.manifest.badKeys : files.manifest.keys,
      expect: bad ? [401] : [200],
    })
    const filled = await runWrk({
      baseUrl: server.baseUrl,
      seconds: 600,
      connections: settings.connections,
      lua: { ...fill.lua, limit: fill.count },
      expect: fill.expect,
    })
    console.log(`key cache filled: ${filled.requests} requests in ${filled.seconds.toFixed(1)} s`)
  }
  // As in the benchmark, the measured run falls between two key-usage flushes (a longer
  // BENCH_DURATION, 35 s or more, takes one in, to profile the flush itself).
  const warmup = flushFreeWarmup((performance.now() - readyAt) / 1000, settings)
  if (warmup > 0) await measure(server, scenario, { ...settings, duration: warmup, warmup: 0 })
  const fromUs = nowUs()
  row = await measure(server, scenario, { ...settings, warmup: 0 })
  window = { fromUs, toUs: nowUs() }
  console.log(
    `${scenario.title} under --cpu-prof (profiling slows the service; compare req/s only with other profiled runs):`,
  )
  console.log(`  ${describe(row)}`)
}

const profile = fs.readdirSync(profileDir).find((file) => file.endsWith('.cpuprofile'))
if (profile === undefined) {
  console.error(`no .cpuprofile was written to ${profileDir}`)
  process.exit(1)
}
const analysis = analyseProfile(path.join(profileDir, profile), { window, top: Number(values.top) })
console.log()
console.log(formatProfile(analysis))
console.log()
console.log(`Profile: ${path.relative(process.cwd(), path.join(profileDir, profile))}`)
