/**
 * `npm run bench`: build, make sure wrk is there, generate (or reuse) the dataset, then measure
 * the ceiling, the catalog scenarios on SQLite with the service on one core, metrics on vs off
 * (metrics-cost.mjs), the request log on vs off (request-log-cost.mjs), the 401 path, progress reads and enrolls at each disclosure-log size (with
 * the bare reference server on the same copy), the PostgreSQL + Redis deployment with two workers, and progress reads against
 * dataset size. Prints the table and writes bench/RESULTS.md. See bench/README.md for the knobs.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { buildService, sourceRevision } from './lib/build-service.mjs'
import { BENCH_DIR, DATA_DIR } from './lib/paths.mjs'
import { ensureWrk } from './lib/wrk.mjs'

const wallStarted = performance.now()
const log = (line = '') => console.log(line)

const buildSeconds = buildService()
const wrkVersion = ensureWrk()

// Everything below reads dist/, which exists only now.
const { benchSettings, describe, measure } = await import('./lib/measure.mjs')
const { DATASETS, ensureSqliteDataset, resetDataset, warmPageCache } = await import('./lib/sqlite-dataset.mjs')
const { disclosureSizes, ensureLogDataset, restoreLog, sizeLabel } = await import('./lib/disclosure-dataset.mjs')
const { capturePostgresSql, captureSqliteSql, writeServiceSql } = await import('./lib/service-sql.mjs')
const { serviceEnv, startServer } = await import('./lib/server-process.mjs')
const { machine } = await import('./lib/process-stats.mjs')
const { hasTaskset, LOAD_CPU, SERVER_CPU } = await import('./lib/pinning.mjs')
const scenarios = await import('./lib/scenarios.mjs')
const { runScenarioGroup } = await import('./lib/scenario-group.mjs')
const { openLoopClient } = await import('./lib/open-loop-client.mjs')
const postgres = await import('./lib/postgres-dataset.mjs')
const { progressQueryPlan } = await import('./lib/query-plan.mjs')
const { checkTargets } = await import('./lib/targets.mjs')
const { keyCacheSeconds, usageFlushSeconds } = await import('./lib/service-constants.mjs')
const { referenceTable, resultsTable, scalingTable, targetsTable, writeResultsMarkdown } = await import(
  './lib/results-report.mjs'
)

const settings = benchSettings()
const only = process.env.BENCH_ONLY?.split(',')
  .map((s) => s.trim())
  .filter(Boolean)
const wanted = (id) => only === undefined || only.length === 0 || only.includes(id)
/** Open-loop rows come with the scenario whose peak sets their rate. */
const wantedScenario = (scenario) => wanted(scenario.openLoop?.of ?? scenario.id)
const logSizes = disclosureSizes()
const scalingMode = (process.env.BENCH_SCALING ?? 'default').toLowerCase()
const postgresMode = (process.env.BENCH_POSTGRES ?? 'on').toLowerCase()
const keepPostgres = process.env.BENCH_KEEP_POSTGRES === '1'
const BAD_KEY_FAILURE_LIMIT = '1000000'

const rows = []
const ready = []
const revision = sourceRevision()
const setup = [
  `Measured: ${revision === undefined ? 'the working tree (no git)' : `commit ${revision.commit}${revision.dirty ? ' plus uncommitted changes in src/' : ''}`}; \`npm run build\` took ${buildSeconds.toFixed(1)} s, and every server of the run started from a copy of that dist/`,
]
const notes = []
const flushStallsMs = []
const running = new Set()
/** Key-cache fills of every one-core service group: together, the cost of a key's first request. */
const sqliteFills = []
/** [service row, reference row] of the same path and log size. */
const referencePairs = []

log(
  `wrk ${wrkVersion}; warm-up ${settings.warmup} s, measured ${settings.duration} s, ${settings.connections} connections, ${settings.threads} thread(s); load average ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
)
if (!hasTaskset())
  log('taskset is not available: nothing is pinned, the load generator competes with the service for CPU')

/** Starts a server and remembers it, so a failure part-way still stops it. */
async function start(options) {
  const server = await startServer(options)
  running.add(server)
  return server
}

/** The bare ceiling server (ceiling-server.mjs) on the service's core, with `settings` of its own. */
function startBare(label, ceilingFile, settings = {}) {
  return start({
    label,
    env: { ...process.env, CEILING_RESPONSE: ceilingFile, ...settings },
    cpu: SERVER_CPU,
    script: path.join(BENCH_DIR, 'ceiling-server.mjs'),
  })
}

async function stop(server) {
  await server.stop()
  running.delete(server)
}

function row(result, scenario, engine, engineLabel) {
  const out = { ...result, scenario, engine, engineLabel }
  log(`    ${describe(out)}`)
  return out
}

/**
 * Ratios to the ceiling: of req/s (the targets), and of req/s per CPU-second of the server,
 * which other processes on a shared machine disturb far less (they take CPU time from the
 * server, not CPU cost per request).
 */
function addRatios(all, ceiling) {
  const ceilingPerCpu = ceiling.rps / ceiling.serverCpu
  for (const r of all) {
    r.ratio = r.rps / ceiling.rps
    r.cpuRatio = r.serverCpu > 0 ? r.rps / r.serverCpu / ceilingPerCpu : undefined
  }
}

/** Which generator measured the open-loop rows (lib/open-loop-client.mjs falls back to Node). */
function openLoopGenerator(openLoops) {
  const { reason } = openLoopClient()
  const unavailable = reason === undefined ? '' : `; the C generator was not available: ${reason}`
  const clients = new Set(openLoops.map((r) => r.openLoop.client))
  return [...clients]
    .map((client) =>
      client === 'c'
        ? 'bench/open-loop-client.c (one epoll loop in C)'
        : `Node on raw sockets (bench/latency-client.mjs --rate${unavailable})`,
    )
    .join(' and ')
}

/**
 * The measuring callback for one runScenarioGroup. An open-loop scenario gets its rate here,
 * from the req/s of its closed-loop scenario measured earlier in the same group.
 */
const measuring = (engine, engineLabel) => {
  const measured = new Map()
  return async (server, scenario, measureIt) => {
    let run = scenario
    if (scenario.openLoop !== undefined) {
      const peak = measured.get(scenario.openLoop.of)
      if (peak === undefined) throw new Error(`${scenario.id} needs ${scenario.openLoop.of} measured before it`)
      run = scenarios.openLoopAt(scenario, peak.rps)
    }
    log(`  ${run.id} (${engine}): ${run.title}`)
    const out = row(await measureIt(server, run), run, engine, engineLabel)
    measured.set(run.id, out)
    return out
  }
}

/** The key-cache fills of a group, summed up as one row: the cost of a key's first request. */
function fillRow(fills, engine, engineLabel, title) {
  if (fills.length === 0) return undefined
  const first = fills[0]
  const rps = fills.reduce((sum, f) => sum + f.requests, 0) / fills.reduce((sum, f) => sum + f.seconds, 0)
  return {
    ...first,
    rps,
    errors: fills.reduce((sum, f) => sum + f.errors, 0),
    scenario: { id: 'key-fill', title },
    engine,
    engineLabel,
    fills: fills.length,
  }
}

async function main() {
  // The dataset.
  const dataset = await ensureSqliteDataset('rows-2m', log)
  const m = dataset.manifest
  setup.push(
    dataset.reused
      ? `SQLite dataset reused (${path.relative(process.cwd(), dataset.database)}; it was generated in ${m.generationSeconds.toFixed(1)} s on ${m.createdAt})`
      : `SQLite dataset generated in **${m.generationSeconds.toFixed(1)} s** (${(m.bytes / 1e6).toFixed(0)} MB): ${Object.entries(
          m.timings,
        )
          .map(([k, v]) => `${k} ${v} s`)
          .join(', ')}`,
    `Dataset: ${m.organisations} organisations with an active agreement, ${m.students.toLocaleString('en')} students, ${m.progressRows.toLocaleString('en')} progress rows, ${m.keys.toLocaleString('en')} live keys (stored as hashes), ANALYZE run`,
  )
  log(
    dataset.reused
      ? `dataset rows-2m reused (generated in ${m.generationSeconds.toFixed(1)} s)`
      : `dataset rows-2m generated in ${m.generationSeconds.toFixed(1)} s: ${JSON.stringify(m.timings)}`,
  )
  const cleared = resetDataset(dataset.database)
  warmPageCache(dataset.database)
  if (cleared > 0)
    setup.push(
      `Disclosure rows a previous run left in the main dataset (catalog, 429 and 401 scenarios, which neither write nor read the log), removed: ${cleared.toLocaleString('en')}`,
    )
  const keys = fs.readFileSync(dataset.keys, 'utf8').split('\n', 1)
  const sqliteEnv = (extra = {}) => serviceEnv({ DATABASE_URL: `sqlite:${dataset.database}`, ...extra })

  // One look at the real service: the bytes the ceiling will serve, an ETag, a lesson slug.
  const probe = await start({ label: 'service (probe)', env: sqliteEnv(), cpu: SERVER_CPU })
  ready.push({ engine: 'sqlite', ms: probe.readyMs })
  const auth = { authorization: `Bearer ${keys[0]}` }
  const tiers = await fetch(`${probe.baseUrl}/api/v1/tiers`, { headers: auth })
  if (tiers.status !== 200) throw new Error(`GET /api/v1/tiers answered ${tiers.status}: ${await tiers.text()}`)
  const ceilingResponse = {
    contentType: tiers.headers.get('content-type'),
    etag: tiers.headers.get('etag'),
    body: await tiers.text(),
  }
  const lessons = await (await fetch(`${probe.baseUrl}/api/v1/lessons`, { headers: auth })).json()
  const slug = lessons.lessons[Math.floor(lessons.lessons.length / 2)].slug
  await stop(probe)
  const ceilingFile = path.join(DATA_DIR, 'ceiling-response.json')
  fs.writeFileSync(ceilingFile, JSON.stringify(ceilingResponse))
  const context = { files: dataset, slug, etag: ceilingResponse.etag, hammerKey: keys[0] }

  // The ceiling, measured before and after the one-core groups; the higher counts (the stricter
  // denominator), both are reported.
  const ceilings = []
  const measureCeiling = async () => {
    log('ceiling (node:http, one core)')
    const server = await startBare('ceiling', ceilingFile)
    const scenario = scenarios.ceilingScenario(context)
    ceilings.push(row(await measure(server, scenario, settings), scenario, 'node:http', 'node:http, 1 core'))
    await stop(server)
  }
  await measureCeiling()

  // SQLite, one core: the catalog paths and the 429 (no disclosure rows written or read).
  const sqliteLabel = 'SQLite, 1 core'
  const allKeysFill = scenarios.keyCacheFill({ file: dataset.keys, count: m.keys })
  const sqliteList = [
    ...scenarios
      .catalogScenarios(context)
      .flatMap((s) => (s.id === 'tiers' ? [s, scenarios.openLoopScenario(s)] : [s])),
    scenarios.hammerScenario(context),
  ].filter(wantedScenario)
  if (sqliteList.length > 0) {
    log('service on SQLite, one core')
    const group = await runScenarioGroup({
      startServer: () => start({ label: 'service', env: sqliteEnv(), cpu: SERVER_CPU }),
      stopServer: stop,
      scenarios: sqliteList,
      fill: allKeysFill,
      avoidFlush: true,
      settings,
      log,
      measureScenario: measuring('sqlite', sqliteLabel),
    })
    flushStallsMs.push(...group.flushStallsMs)
    for (const ms of group.readies) ready.push({ engine: 'sqlite', ms })
    memoryNote(group, m.keys)
    sqliteFills.push(...group.fills)
    rows.push(...group.rows)
    const hammer = group.rows.find((r) => r.scenario.id === 'hammer-429')
    if (hammer !== undefined) {
      const accepted = (hammer.warmupStatuses?.['200'] ?? 0) + (hammer.statuses['200'] ?? 0)
      notes.push(
        `Hammer: requests of the one key accepted (200) over warm-up and measured run: ${accepted} (its limit is 100 in any 60 s, less what the fill had used); every other answer was 429 rate_limited.`,
      )
    }
  }

  // Metrics on against off, side by side on one core: the cost of counting every answer (metrics-cost.mjs).
  if (wanted('metrics-cost')) {
    log('metrics on vs off, catalog, both servers at once on one core')
    const { metricsCost, metricsCostTable, METRICS_TARGET, recordCost } = await import('./metrics-cost.mjs')
    const keysFile = path.join(path.dirname(dataset.database), 'metrics-cost-keys.txt')
    fs.writeFileSync(keysFile, `${fs.readFileSync(dataset.keys, 'utf8').split('\n').slice(0, 2000).join('\n')}\n`)
    const results = await metricsCost({ database: dataset.database, keysFile, log })
    log(metricsCostTable(results))
    const worst = Math.min(...results.map((r) => r.ratio))
    notes.push(
      `Metrics on / off, catalog req/s per CPU (median of ${results[0].rounds} rounds, ${results[0].mode}): ${results.map((r) => `${r.id} ${r.ratio.toFixed(3)}`).join(', ')}; target >= ${METRICS_TARGET}${worst >= METRICS_TARGET ? '' : ' (MISSED)'}; one counted answer costs ${(await recordCost()).toFixed(0)} ns of CPU.`,
    )
  }

  // Request log on against off: catalog, progress and enroll per CPU (request-log-cost.mjs).
  if (wanted('request-log-cost')) {
    log('request log on vs off: tiers, progress and enroll, one server at a time on one core')
    const { entryCost, requestLogCost, requestLogCostTable, requestLogFiles, REQUEST_LOG_TARGET } = await import(
      './request-log-cost.mjs'
    )
    const results = await requestLogCost({ database: dataset.database, ...requestLogFiles(dataset), log })
    log(requestLogCostTable(results))
    const worst = Math.min(...results.map((r) => r.ratio))
    const cost = await entryCost()
    notes.push(
      `Request log on / off, req/s per CPU (median of ${results[0].rounds} rounds, ${results[0].mode}): ${results.map((r) => `${r.id} ${r.ratio.toFixed(3)}`).join(', ')}; target >= ${REQUEST_LOG_TARGET}${worst >= REQUEST_LOG_TARGET ? '' : ' (MISSED)'}; one entry costs ${cost.record.toFixed(0)} ns of CPU on the request path and ${cost.flush.toFixed(0)} ns to batch and write.`,
    )
  }

  if (wanted('bad-key-401')) {
    log(`service on SQLite, one core, AUTH_FAILURE_LIMIT=${BAD_KEY_FAILURE_LIMIT}`)
    const group = await runScenarioGroup({
      startServer: () =>
        start({
          label: 'service (401)',
          env: sqliteEnv({ AUTH_FAILURE_LIMIT: BAD_KEY_FAILURE_LIMIT }),
          cpu: SERVER_CPU,
        }),
      stopServer: stop,
      scenarios: [scenarios.badKeyScenario(context)],
      fill: scenarios.keyCacheFill({ file: dataset.badKeys, count: m.badKeys, expect: [401] }),
      avoidFlush: true,
      settings,
      log,
      measureScenario: measuring('sqlite', `${sqliteLabel}, AUTH_FAILURE_LIMIT=${BAD_KEY_FAILURE_LIMIT}`),
    })
    for (const ms of group.readies) ready.push({ engine: 'sqlite', ms })
    rows.push(...group.rows)
    notes.push(
      `401 scenario: the server runs with AUTH_FAILURE_LIMIT=${BAD_KEY_FAILURE_LIMIT} so that it measures the 401 path; with the default (30 a minute per address) ` +
        `every request after the 30th would be answered 429 too_many_failed_authentications. The ${m.badKeys.toLocaleString('en')} bad keys are well formed ` +
        '(valid checksum) but were never stored; after the fill each is answered from the key cache\'s remembered "no such key".',
    )
  }

  // Progress reads and enrolls at each disclosure-log size, each followed by the reference.
  if (wanted('progress') || wanted('enroll')) {
    const sqlFile = path.join(DATA_DIR, 'service-sql.json')
    await writeServiceSql(captureSqliteSql(dataset.database), sqlFile)
    setup.push(
      `Disclosure log sizes for progress and enroll: ${logSizes.map((n) => sizeLabel(n)).join(', ')} rows (BENCH_DISCLOSURE_ROWS); targets and open-loop rows at the largest`,
    )
    for (const logRows of logSizes) await studentGroups(dataset, logRows, logRows === logSizes.at(-1), sqlFile)
  }
  const sqliteFill = fillRow(
    sqliteFills,
    'sqlite',
    sqliteLabel,
    'GET /api/v1/tiers, first request of each key (key-cache fill)',
  )
  if (sqliteFill !== undefined) rows.push(sqliteFill)

  await measureCeiling()
  const ceiling = ceilings.reduce((a, b) => (b.rps > a.rps ? b : a))
  const progressRow =
    rows.find((r) => r.scenario.id === 'progress' && r.engine === 'sqlite' && r.scenario.target !== undefined) ??
    rows.find((r) => r.scenario.id === 'progress' && r.engine === 'sqlite')
  if (progressRow !== undefined) {
    // The same bare server burning what a progress read costs: how much of the progress
    // latency tail any Node server with that much work per request would show.
    const spinUs = Math.round((1e6 * progressRow.serverCpu) / progressRow.rps)
    log(`reference: node:http burning ${spinUs} us of CPU per request (a progress read's cost)`)
    const server = await startBare('tail reference', ceilingFile, { CEILING_SPIN_US: String(spinUs) })
    const scenario = {
      ...scenarios.ceilingScenario(context),
      id: 'tail-reference',
      title: `reference: node:http, ${spinUs} us of CPU per request, no auth`,
    }
    rows.push(row(await measure(server, scenario, settings), scenario, 'node:http', 'node:http, 1 core'))
    await stop(server)
  }
  await openLoopTailReferences(context, ceilingFile, ceiling)
  if (['tiers', 'lessons', 'lessons-tier', 'lesson'].some(wanted)) {
    // The bare server again, sending every header a service 200 carries: what the contract's
    // response fields cost Node before any of the service's own work.
    log("reference: node:http with the service's response headers")
    const server = await startBare('header reference', ceilingFile, { CEILING_HEADERS: 'service' })
    const scenario = {
      ...scenarios.ceilingScenario(context),
      id: 'header-reference',
      title: "reference: node:http, the service's 12 response headers, no auth",
    }
    rows.push(row(await measure(server, scenario, settings), scenario, 'node:http', 'node:http, 1 core'))
    await stop(server)
  }
  rows.unshift(ceiling)
  setup.push(
    `Ceiling measured twice, before and after the one-core groups: ${ceilings.map((c) => `${Math.round(c.rps).toLocaleString('en')} req/s`).join(' and ')}; the higher is used`,
  )

  // PostgreSQL + Redis, two workers.
  if (postgresMode !== 'off') {
    const reason = await postgres.unavailableReason()
    if (reason !== undefined) {
      log(`PostgreSQL + Redis skipped: ${reason}`)
      notes.push(`PostgreSQL + Redis scenarios skipped: ${reason}.`)
    } else {
      await runPostgres(dataset, context)
    }
  }

  // Progress read against dataset size.
  const scaling = []
  let scalingNote = ''
  if (scalingMode !== 'off' && wanted('progress')) {
    const names = ['rows-20k', 'rows-200k', 'rows-2m', ...(scalingMode === 'full' ? ['rows-20m'] : [])]
    scalingNote =
      scalingMode === 'full'
        ? 'BENCH_SCALING=full: 20k to 20M rows.'
        : '20M rows only with BENCH_SCALING=full (that dataset takes a few minutes to generate and about 5 GB of disk).'
    log('progress read against dataset size')
    for (const name of names) scaling.push(await scalingPoint(name, dataset))
    log(scalingTable(scaling))
  }

  // A district's roster imported through the dashboard while progress is read (docs/rosters.md).
  if (wanted('roster-import')) {
    const students = Number(process.env.BENCH_ROSTER_STUDENTS ?? 100_000)
    log(`roster import: ${students.toLocaleString('en')} students through the dashboard, progress read meanwhile`)
    const run = spawnSync(
      process.execPath,
      [
        path.join(BENCH_DIR, 'roster-import-under-load.mjs'),
        String(students),
        'dashboard',
        '8',
        path.dirname(BENCH_DIR),
      ],
      { encoding: 'utf8', maxBuffer: 16 << 20 },
    )
    const line = run.stdout.trim().split('\n').at(-1) ?? ''
    if (run.status !== 0 || !line.startsWith('{'))
      notes.push(`Roster import: failed (${run.stderr.trim().slice(-300)}).`)
    else {
      const r = JSON.parse(line)
      const reads = (x) => `p99 ${x.p99} ms, max ${x.max} ms over ${x.n.toLocaleString('en')} reads`
      const text =
        `Roster import (bench/roster-import-under-load.mjs, SQLite, through the dashboard): a first OneRoster 1.2 export of ` +
        `${r.students.toLocaleString('en')} students (${r.zipMiB} MiB .zip) previewed in ${r.firstImport.previewSeconds.toFixed(1)} s ` +
        `and imported in ${r.firstImport.applySeconds.toFixed(1)} s, progress reads ${reads(r.firstImport.reads)}; the same ` +
        `export again ${r.sameExportAgain.applySeconds.toFixed(1)} s, reads ${reads(r.sameExportAgain.reads)}; reads alone ${reads(r.readsAlone)}.`
      notes.push(text)
      log(`  ${text}`)
    }
  }

  // Report.
  addRatios(rows, ceiling)
  const checks = checkTargets({ rows, ready, memory })
  const wallSeconds = (performance.now() - wallStarted) / 1000
  const fill = rows.find((r) => r.scenario.id === 'key-fill' && r.engine === 'sqlite')
  const warmTiers = rows.find((r) => r.scenario.id === 'tiers' && r.engine === 'sqlite')
  const ttl = keyCacheSeconds()
  if (fill !== undefined && warmTiers !== undefined && ttl !== undefined) {
    const lookupMs = 1000 / fill.rps - 1000 / warmTiers.rps
    const perSecond = m.keys / ttl
    notes.push(
      `Key cache: the service keeps a key record ${ttl} s, so ${m.keys.toLocaleString('en')} keys in steady use cost ${perSecond.toFixed(perSecond < 10 ? 1 : 0)} storage lookups a second ` +
        `whatever the request rate. A key's first request took ${(1000 / fill.rps).toFixed(3)} ms of the core against ${(1000 / warmTiers.rps).toFixed(3)} ms with the key cached, ` +
        `so those re-reads take about ${((perSecond * lookupMs) / 10).toFixed(1)}% of the core. The scenarios are measured with every key cached (see bench/README.md, "Key cache").`,
    )
  }
  const period = usageFlushSeconds()
  if (flushStallsMs.length > 0) {
    const sorted = [...flushStallsMs].sort((a, b) => a - b)
    const line =
      `Key-usage flush: every ${period} s (USAGE_FLUSH_MS, src/app.ts) the service writes key usage. The measured runs are placed between flushes, so the table leaves it out; ` +
      `in the ${sorted.length} warm-ups that spanned a flush the longest request waited ${sorted.map((ms) => `${Math.round(ms)}`).join(', ')} ms ` +
      `(median ${Math.round(sorted[Math.floor(sorted.length / 2)])} ms). Compare with the max ms column: a clearly longer wait is what every client meets once per flush in steady use with ${m.keys.toLocaleString('en')} keys.`
    notes.unshift(line)
    log(line)
  } else if (period === undefined) {
    notes.push(
      'USAGE_FLUSH_MS was not found in dist/app.js, so the measured runs were not placed between key-usage flushes.',
    )
  }
  const stalled = rows.filter(
    (r) =>
      r.latencyMs.max > 1000 &&
      r.engine !== 'node:http' &&
      r.scenario.id !== 'key-fill' &&
      !r.scenario.id.startsWith('reference-'),
  )
  const crossCheck = rows.find((r) => r.scenario.id === 'progress-node-client')
  if (stalled.length > 0) {
    notes.push(
      `Long waits: ${stalled.length} rows have a request that waited over 1 s (max ms column: ${stalled
        .map(
          (r) => `${r.scenario.id}${r.engine === 'postgres' ? ' (PostgreSQL)' : ''} ${Math.round(r.latencyMs.max)} ms`,
        )
        .join(', ')}). ` +
        (crossCheck === undefined
          ? ''
          : `The same progress reads measured by Node's HTTP client had p99 ${crossCheck.latencyMs.p99.toFixed(0)} ms and max ${crossCheck.latencyMs.max.toFixed(0)} ms; `) +
        'wrk 4.1 shows a multi-second tail for any server that needs about 1 ms of CPU per request at 64 connections (see the tail reference row and bench/README.md, "Reading the tail").',
    )
  }
  const openLoops = rows.filter((r) => r.openLoop !== undefined)
  if (openLoops.length > 0) {
    notes.push(
      `Open loop: each "open loop" row sends its requests on a fixed schedule at ${Math.round(scenarios.OPEN_LOOP_SHARE * 100)}% of the req/s its closed-loop row reached just before on the same server, ` +
        `${settings.connections} connections, by ${openLoopGenerator(openLoops)}. Latency counts from when each request was due, so a request that had to wait for a free connection, ` +
        'or for a client that fell behind, carries that wait (no coordinated omission). How late requests went out, p99 / max: ' +
        openLoops
          .map(
            (r) =>
              `${r.scenario.id}${r.scenario.disclosureRows === undefined ? '' : ` (${sizeLabel(r.scenario.disclosureRows)} log)`} ${r.openLoop.sendLagMs.p99.toFixed(2)} / ${r.openLoop.sendLagMs.max.toFixed(1)} ms`,
          )
          .join(', ') +
        ' (a request goes out late when every connection is still waiting for an answer, or when the client itself falls behind).' +
        (openLoops.some((r) => r.scenario.tailReferenceOf !== undefined)
          ? ' Each "open loop at ... (as <row>)" reference sends the same schedule to the bare ceiling server, made as busy per request as the service was on that path: ' +
            'the tail Node and this machine give any server doing that work, the floor under the p99 target (Targets).'
          : ''),
    )
  }
  if (referencePairs.length > 0) {
    notes.push(
      'Reference (bench/reference-sqlite-server.mjs): node:http and better-sqlite3 running the statements captured from the service (key by hash once per key; the student with their progress rows in one statement, as the fast path reads them; disclosure insert; ' +
        'link check, conditional update, tier read-back), keys looked up on a read-only connection and progress read on the writer between commits, WAL with synchronous=NORMAL and checkpoints on a worker thread, and group commit: the writes of one ' +
        'event-loop turn in one transaction (each enroll in a savepoint), every request answered after that COMMIT. Same JSON bodies, summary included. No scopes, agreements, rate limits, key usage, ' +
        'extra headers, logging or sealing. It starts from the same prepared log as the service (the rows the service appended are taken out first) and gets the same key-cache fill.',
    )
  }
  notes.push(
    "The service runs with NODE_ENV=production LOG_LEVEL=warn SEED_DEMO=false, as in production. Peak RSS is VmHWM of the server process, reset (clear_refs) before each measured run, so it is the peak under that scenario's load.",
    '"Server CPU" is the server\'s CPU time over the measured run (100% = one core). "Other load" is the rest of the server core\'s busy time: other processes on this shared machine that took CPU from the service (the larger it is, the less the row says about the service). "wrk core" is how busy the load generator\'s core was.',
  )
  const runInfo = {
    date: new Date().toISOString(),
    machine: machine(),
    wrkVersion,
    settings,
    pinning: hasTaskset()
      ? `Service (and ceiling) pinned to core ${SERVER_CPU} with \`taskset -c ${SERVER_CPU}\`, wrk to core ${LOAD_CPU} (\`taskset -c ${LOAD_CPU}\`); the PostgreSQL group is not pinned (see notes).`
      : 'taskset missing: nothing pinned.',
    setup: [
      ...setup,
      `Ready to serve (spawn to first /readyz 200), every start: ${ready.map((r) => `${Math.round(r.ms)} ms${r.engine === 'postgres' ? ' (PostgreSQL)' : ''}`).join(', ')}`,
    ],
    ceiling,
    rows,
    checks,
    references: referencePairs,
    scaling,
    scalingNote,
    notes,
    wallSeconds,
    loadAverage: os.loadavg(),
  }
  const file = writeResultsMarkdown(runInfo)
  log()
  log(resultsTable(rows))
  log()
  if (referencePairs.length > 0) {
    log(referenceTable(referencePairs))
    log()
  }
  log(targetsTable(checks))
  log()
  log(`Results written to ${path.relative(process.cwd(), file)}; total wall time ${wallSeconds.toFixed(0)} s.`)
}

/** RSS of the first one-core service group that ran: at ready and with every key cached (the memory target). */
let memory
/** The memory note, from the first one-core service group that ran. */
function memoryNote(group, keys) {
  if (memory !== undefined || group.memory[0] === undefined) return
  memory = { ...group.memory[0], keys }
  notes.push(
    `Memory: the SQLite server's RSS right after start was ${memory.atReadyMb.toFixed(0)} MB, and ${memory.afterFillMb.toFixed(0)} MB once its key cache held all ${keys.toLocaleString('en')} keys (before any scenario).`,
  )
}

/**
 * Each open-loop row again, against the bare ceiling server burning what that path's request
 * costs beyond the ceiling's own (CPU per request of the closed-loop row, less the ceiling's),
 * at the same rate, warmed up the same way: the latency tail that Node and this machine give
 * any server doing that much work, which the service's p99 is read against (lib/targets.mjs).
 * On a shared machine that floor moves from run to run.
 */
async function openLoopTailReferences(context, ceilingFile, ceiling) {
  // The bare server's own cost of a request comes on top of what it burns.
  const ceilingUs = ceiling.serverCpu > 0 ? (1e6 * ceiling.serverCpu) / ceiling.rps : 0
  const openRows = rows.filter((r) => r.engine === 'sqlite' && r.scenario.openLoop !== undefined)
  for (const open of openRows) {
    const closed = rows.find(
      (r) =>
        r.engine === 'sqlite' &&
        r.scenario.id === open.scenario.openLoop.of &&
        r.scenario.disclosureRows === open.scenario.disclosureRows,
    )
    if (closed === undefined || !(closed.serverCpu > 0)) continue
    const spinUs = Math.max(0, Math.round((1e6 * closed.serverCpu) / closed.rps - ceilingUs))
    const { rate } = open.scenario
    log(
      `reference: node:http burning ${spinUs} us more per request, open loop at ${rate} req/s (as ${open.scenario.id})`,
    )
    const server = await startBare('open-loop tail reference', ceilingFile, { CEILING_SPIN_US: String(spinUs) })
    const scenario = {
      ...scenarios.ceilingScenario(context),
      id: `tail-reference-${open.scenario.id}`,
      title: `reference: node:http + ${spinUs} us of CPU per request, no auth, open loop at ${rate.toLocaleString('en')} req/s (as ${open.scenario.id})`,
      rate,
      tailReferenceOf: open.scenario.id,
    }
    try {
      rows.push(row(await measure(server, scenario, settings), scenario, 'node:http', 'node:http, 1 core'))
    } finally {
      await stop(server)
    }
  }
}

/**
 * Progress reads and enrolls on a copy of the dataset whose disclosure log holds `logRows`
 * rows: the service (closed loop; at the largest size also the Node-client cross-check and the
 * open-loop rows), then the reference server on the same copy, brought back to the same rows.
 */
async function studentGroups(dataset, logRows, largest, sqlFile) {
  const label = sizeLabel(logRows)
  log(`progress and enroll, ${label} rows in the disclosure log`)
  const files = await ensureLogDataset(dataset, logRows, { log })
  const prepared = files.log.prepared
  setup.push(
    `Disclosure log of ${label} rows: ${
      files.reused
        ? `copy reused (prepared in ${files.log.generationSeconds.toFixed(1)} s on ${files.log.createdAt}${files.removed > 0 ? `; ${files.removed.toLocaleString('en')} rows appended by the last run taken out` : ''})`
        : `copy prepared in **${files.log.generationSeconds.toFixed(1)} s** (${Object.entries(files.log.timings)
            .map(([k, v]) => `${k} ${v} s`)
            .join(', ')}; ${(files.log.bytes / 1e6).toFixed(0)} MB)`
    }; ${prepared.segments.toLocaleString('en')} sealed segments of ${files.log.segmentRows}, ${prepared.unsealedRows.toLocaleString('en')} rows unsealed at start`,
  )
  const context = { files, disclosureRows: logRows, held: largest }
  const closed = [
    ...(wanted('progress') ? [scenarios.progressScenario(context)] : []),
    ...(wanted('enroll') ? [scenarios.enrollScenario(context)] : []),
  ]
  const list = [...closed]
  if (largest) {
    if (wanted('progress')) list.push(scenarios.progressCrossCheck(context))
    list.push(...closed.map(scenarios.openLoopScenario))
  }
  const fill = scenarios.keyCacheFill({ file: files.keys, count: files.manifest.keys })
  const group = await runScenarioGroup({
    startServer: () =>
      start({
        label: `service (${label} log)`,
        env: serviceEnv({ DATABASE_URL: `sqlite:${files.database}` }),
        cpu: SERVER_CPU,
      }),
    stopServer: stop,
    scenarios: list,
    fill,
    avoidFlush: true,
    settings,
    log,
    measureScenario: measuring('sqlite', 'SQLite, 1 core'),
  })
  flushStallsMs.push(...group.flushStallsMs)
  for (const ms of group.readies) ready.push({ engine: 'sqlite', ms })
  memoryNote(group, files.manifest.keys)
  sqliteFills.push(...group.fills)
  rows.push(...group.rows)

  log(`reference server (node:http + better-sqlite3), ${label} rows in the disclosure log`)
  restoreLog(files.database, prepared)
  const reference = await runScenarioGroup({
    startServer: () =>
      start({
        label: `reference (${label} log)`,
        env: { ...process.env, REFERENCE_DATABASE: files.database, REFERENCE_SQL: sqlFile },
        cpu: SERVER_CPU,
        script: path.join(BENCH_DIR, 'reference-sqlite-server.mjs'),
      }),
    stopServer: stop,
    scenarios: closed.map((s) => scenarios.referenceScenario(s)),
    fill,
    settings,
    log,
    measureScenario: measuring('node:http', 'node:http + better-sqlite3, 1 core'),
  })
  rows.push(...reference.rows)
  for (const service of group.rows.filter((r) => closed.includes(r.scenario))) {
    const match = reference.rows.find((r) => r.scenario.id === `reference-${service.scenario.id}`)
    if (match !== undefined) referencePairs.push([service, match])
  }
}

function keyTtlText() {
  const seconds = keyCacheSeconds()
  return seconds === undefined ? 'too' : seconds >= 120 ? `${seconds / 60} minutes` : `${seconds} s`
}

async function runPostgres(dataset, context) {
  log('PostgreSQL + Redis, WORKERS=2 (not pinned)')
  const loaded = await postgres.ensurePostgresDataset(dataset, dataset.manifest, { keep: keepPostgres, log })
  setup.push(
    loaded.reused
      ? `PostgreSQL schema \`${postgres.SCHEMA}\` reused (BENCH_KEEP_POSTGRES=1)`
      : `PostgreSQL schema \`${postgres.SCHEMA}\` loaded with COPY in ${loaded.seconds.toFixed(1)} s (${keepPostgres ? 'kept for the next run' : 'dropped at the end'})`,
  )
  const prefix = `bench:${process.pid}:${Date.now()}:`
  const env = serviceEnv({
    DATABASE_URL: loaded.url,
    REDIS_URL: postgres.REDIS_URL,
    REDIS_KEY_PREFIX: prefix,
    WORKERS: '2',
    // The key-cache fill sends 50,000 keys nobody has cached yet from one address over 64
    // connections: each storage lookup holds a reservation against the address's failure limit
    // (30 by default) until it comes back, and with PostgreSQL and Redis round trips more than
    // 30 are in flight, so the default answers some of them 429, as designed for guessing.
    AUTH_FAILURE_LIMIT: '1000000',
  })
  const label = 'PostgreSQL + Redis, 2 workers'
  try {
    const list = [
      ...scenarios.catalogScenarios(context),
      scenarios.progressScenario(context),
      scenarios.enrollScenario(context),
    ]
      .filter((s) => wanted(s.id))
      .map((s) => ({ ...s, target: undefined }))
    const group = await runScenarioGroup({
      startServer: () => start({ label: 'service (postgres)', env, cpu: undefined }),
      stopServer: stop,
      scenarios: list,
      fill: scenarios.keyCacheFill({ file: dataset.keys, count: dataset.manifest.keys }),
      refill: false,
      settings,
      log,
      measureScenario: measuring('postgres', label),
    })
    for (const ms of group.readies) ready.push({ engine: 'postgres', ms })
    const fill = fillRow(
      group.fills,
      'postgres',
      label,
      'GET /api/v1/tiers, first request of each key (key-cache fill)',
    )
    rows.push(...group.rows, ...(fill ? [fill] : []))

    // The reference beside the service's student rows, from an empty log too.
    const students = list.filter((s) => s.id === 'progress' || s.id === 'enroll')
    if (students.length > 0) {
      log('reference server (node:http + node-postgres), 2 workers')
      const sqlFile = path.join(DATA_DIR, 'service-sql-postgres.json')
      await writeServiceSql(capturePostgresSql(postgres.POSTGRES_URL, postgres.SCHEMA), sqlFile)
      await postgres.emptyDisclosureLog()
      const reference = await runScenarioGroup({
        startServer: () =>
          start({
            label: 'reference (postgres)',
            env: {
              ...process.env,
              REFERENCE_POSTGRES_URL: postgres.POSTGRES_URL,
              REFERENCE_SCHEMA: postgres.SCHEMA,
              REFERENCE_SQL: sqlFile,
              REFERENCE_WORKERS: '2',
            },
            cpu: undefined,
            script: path.join(BENCH_DIR, 'reference-postgres-server.mjs'),
          }),
        stopServer: stop,
        scenarios: students.map((s) => scenarios.referenceScenario(s, { postgres: true })),
        fill: scenarios.keyCacheFill({ file: dataset.keys, count: dataset.manifest.keys }),
        refill: false,
        settings,
        log,
        measureScenario: measuring('postgres', 'node:http + node-postgres, 2 workers'),
      })
      rows.push(...reference.rows)
      for (const service of group.rows.filter((r) => students.includes(r.scenario))) {
        const match = reference.rows.find((r) => r.scenario.id === `reference-${service.scenario.id}`)
        if (match !== undefined) referencePairs.push([service, match])
      }
    }
  } finally {
    await postgres
      .clearRedisPrefix(prefix)
      .catch((error) => log(`could not clear Redis keys ${prefix}*: ${error.message}`))
    if (!keepPostgres) await postgres.dropPostgresDataset()
  }
  notes.push(
    `PostgreSQL + Redis: WORKERS=2 (node:cluster), DATABASE_URL on the schema above, REDIS_URL with a REDIS_KEY_PREFIX of its own (its keys deleted afterwards). ` +
      'The service cannot be pinned to one core here (two workers plus PostgreSQL and Redis share the two cores with wrk), so these rows are not comparable with the one-core ceiling: ' +
      'their "x ceiling" is for orientation only and no target applies. Peak RSS is the largest worker\'s. ' +
      "Key cache: one server for the whole group after one fill (one request per key, which reaches only one of the two workers' caches), so these rows include " +
      `key lookups as they happen in steady use: each worker reads each key on its first request there and again once its entry is ${keyTtlText()} old. ` +
      '(Refilling both caches before each pair of scenarios, as on SQLite, would take longer than the scenarios.) ' +
      'Its progress and enroll rows start from an empty disclosure log (emptied before measuring, as before the SQLite log-size axis; the log sizes are SQLite only), ' +
      'and so does the reference beside them (bench/reference-postgres-server.mjs: node:http + node-postgres, two workers with a pool of 10 each, the SQL captured from the service for PostgreSQL, ' +
      'the disclosure insert on its own and the enroll in BEGIN ... COMMIT as the service sends them; no Redis).',
  )
}

async function scalingPoint(name, mainDataset) {
  const spec = DATASETS[name]
  const planOf = async (files) => progressQueryPlan(files.database, files.pairs)
  // The main dataset's point is its progress row on an empty log, like the other sizes, if the run has one.
  const main = rows.find(
    (r) => r.scenario.id === 'progress' && r.engine === 'sqlite' && r.scenario.disclosureRows === 0,
  )
  if (name === 'rows-2m' && main !== undefined) {
    const plan = await planOf(mainDataset)
    log(`  ${name}: the main progress scenario; plan: ${plan.plan.join(' / ')}`)
    return { ...main, ...plan, progressRows: mainDataset.manifest.progressRows, students: spec.students }
  }
  const files = await ensureSqliteDataset(name, log)
  if (!files.reused) setup.push(`Scaling dataset ${name} generated in ${files.manifest.generationSeconds.toFixed(1)} s`)
  resetDataset(files.database)
  warmPageCache(files.database)
  const plan = await planOf(files)
  log(`  ${name}: plan: ${plan.plan.join(' / ')}`)
  const group = await runScenarioGroup({
    startServer: () =>
      start({
        label: `service (${name})`,
        env: serviceEnv({ DATABASE_URL: `sqlite:${files.database}` }),
        cpu: SERVER_CPU,
      }),
    stopServer: stop,
    scenarios: [scenarios.progressScenario({ files })],
    fill: scenarios.keyCacheFill({ file: files.keys, count: files.manifest.keys }),
    avoidFlush: true,
    settings,
    log,
    measureScenario: measuring('sqlite', `SQLite, ${name}`),
  })
  flushStallsMs.push(...group.flushStallsMs)
  return { ...group.rows[0], ...plan, progressRows: files.manifest.progressRows, students: spec.students }
}

try {
  await main()
} catch (error) {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error)
  process.exitCode = 1
} finally {
  for (const server of [...running]) await server.stop().catch(() => {})
}
