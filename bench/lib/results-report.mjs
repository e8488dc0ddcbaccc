/**
 * Turns the measurements into the table printed at the end of a run and into bench/RESULTS.md.
 */
import fs from 'node:fs'
import path from 'node:path'
import { BENCH_DIR } from './paths.mjs'

const int = (x) => Math.round(x).toLocaleString('en')
const ms = (x) => (x === undefined ? '-' : x < 10 ? x.toFixed(2) : x.toFixed(1))
const mb = (x) => (x === undefined ? '-' : x.toFixed(0))
const pct = (x) => (x === undefined ? '-' : `${Math.round(x * 100)}%`)

function markdownTable(header, lines) {
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...lines.map((line) => `| ${line.join(' | ')} |`),
  ].join('\n')
}

/** Busy time of the server's core not spent by the server: other processes, steal included. */
function otherLoad(row) {
  if (row.coreBusy === undefined || row.serverCpu === undefined) return undefined
  return Math.max(0, row.coreBusy[0] + (row.coreSteal?.[0] ?? 0) - row.serverCpu)
}

export function resultsTable(rows) {
  return markdownTable(
    [
      'Scenario',
      'Engine',
      'req/s',
      'p50 ms',
      'p99 ms',
      'p99.9 ms',
      'max ms',
      'Errors',
      'x ceiling',
      'x ceiling per CPU',
      'Peak RSS MB',
      'Server CPU',
      'Other load',
      'wrk core',
    ],
    rows.map((row) => [
      row.scenario.title,
      row.engineLabel,
      int(row.rps),
      ms(row.latencyMs.p50),
      ms(row.latencyMs.p99),
      ms(row.latencyMs.p999),
      ms(row.latencyMs.max),
      String(row.errors),
      row.ratio === undefined ? '-' : row.ratio.toFixed(2),
      row.cpuRatio === undefined ? '-' : row.cpuRatio.toFixed(2),
      mb(row.peakRssMb),
      pct(row.serverCpu),
      row.engine === 'postgres' ? '-' : pct(otherLoad(row)),
      pct(row.coreBusy?.[1]),
    ]),
  )
}

export function targetsTable(checks) {
  return markdownTable(
    ['Target', 'Measured', 'Result'],
    checks.map((check) => [
      check.target,
      check.measured,
      check.met === undefined ? 'for information' : check.met ? 'met' : '**missed**',
    ]),
  )
}

/**
 * The service against the reference server (same SQL, storage settings and group commit) for
 * each path and log size: what the service's own work costs, in throughput and in CPU.
 */
export function referenceTable(pairs) {
  const cpuUs = (row) => (row.serverCpu > 0 ? (1e6 * row.serverCpu) / row.rps : undefined)
  const us = (x) => (x === undefined ? '-' : x.toFixed(0))
  return markdownTable(
    [
      'Path',
      'Engine',
      'Disclosure log rows',
      'Service req/s',
      'Reference req/s',
      'Service / reference',
      'Service µs CPU per request',
      'Reference µs CPU per request',
      'Our own µs per request',
    ],
    pairs.map(([service, reference]) => {
      const own =
        cpuUs(service) !== undefined && cpuUs(reference) !== undefined ? cpuUs(service) - cpuUs(reference) : undefined
      return [
        service.scenario.id,
        service.engineLabel,
        service.scenario.disclosureRows === undefined ? '0 (emptied)' : int(service.scenario.disclosureRows),
        int(service.rps),
        int(reference.rps),
        (service.rps / reference.rps).toFixed(2),
        us(cpuUs(service)),
        us(cpuUs(reference)),
        us(own),
      ]
    }),
  )
}

export function scalingTable(scaling) {
  return markdownTable(
    ['Progress rows', 'Students', 'req/s', 'p50 ms', 'p99 ms', 'p99.9 ms', 'Errors', 'Server CPU', 'Query plan'],
    scaling.map((point) => [
      int(point.progressRows),
      int(point.students),
      int(point.rps),
      ms(point.latencyMs.p50),
      ms(point.latencyMs.p99),
      ms(point.latencyMs.p999),
      String(point.errors),
      pct(point.serverCpu),
      point.plan.map((step) => `\`${step}\``).join('<br>'),
    ]),
  )
}

export function writeResultsMarkdown(run) {
  const { machine, settings } = run
  const full = settings.duration >= 10
  const lines = [
    '# Benchmark results',
    '',
    `Written by \`npm run bench\` on ${run.date}. ${full ? 'Full run' : `**Short run** (BENCH_DURATION=${settings.duration}; the targets are judged on runs of 10 s or more)`}: ` +
      `warm-up ${settings.warmup} s, then ${settings.duration} s measured per scenario, ${settings.connections} connections, ${settings.threads} wrk thread(s). ` +
      `Total wall time ${run.wallSeconds.toFixed(0)} s.`,
    '',
    '## Machine',
    '',
    `- \`nproc\`: ${machine.nproc}; CPU: ${machine.cpuModel}; memory ${machine.memoryGb.toFixed(0)} GB; Linux ${machine.kernel}`,
    `- Node ${machine.node}; wrk ${run.wrkVersion}`,
    `- ${run.pinning}`,
    '- The machine is shared: other jobs may run during a benchmark, so expect a few percent of noise between runs.',
    '',
    '## Setup',
    '',
    ...run.setup.map((line) => `- ${line}`),
    '',
    '## Results',
    '',
    `Ceiling: a bare \`node:http\` server (bench/ceiling-server.mjs) answering the service's own /api/v1/tiers bytes, on the service's core, ` +
      `same wrk settings: **${int(run.ceiling.rps)} req/s** (at ${pct(run.ceiling.serverCpu)} of its core). "x ceiling" is each scenario's req/s divided by that; ` +
      '"x ceiling per CPU" divides req/s per CPU-second of the server by the same for the ceiling: on a shared machine it is the steadier of the two, ' +
      'because other processes change how much CPU the server gets, not what a request costs.',
    '',
    resultsTable(run.rows),
    '',
    ...(run.references.length === 0
      ? []
      : [
          '## Service vs. reference (same SQL and storage settings)',
          '',
          'Each service row next to its reference server (bench/reference-sqlite-server.mjs on the same dataset copy and core, bench/reference-postgres-server.mjs on the same schema), same wrk script (see notes for what the references do and leave out). ' +
            '"Service / reference" is the share of the bare server\'s throughput the service reaches; "our own µs" is the CPU the service spends per request beyond the reference\'s (server CPU time / requests).',
          '',
          referenceTable(run.references),
          '',
        ]),
    '## Targets (SQLite, service on one core)',
    '',
    targetsTable(run.checks),
    '',
  ]
  if (run.scaling.length > 0) {
    lines.push(
      '## Progress read vs. dataset size (SQLite, one core)',
      '',
      `Each size is its own dataset (20 progress rows per student); ${run.scalingNote} ` +
        'req/s and p50 show what a read costs; wrk\'s p99 here carries the tail it reports for any server needing about 1 ms per request (bench/README.md, "Reading the tail"). ' +
        'Server CPU well under 100% means the server waited on storage (the file no longer fits in memory it has to itself).',
      '',
      scalingTable(run.scaling),
      '',
      'The query, as the service sends it on SQLite (captured from its own `readStudentRows`, called as its fast path calls it):',
      '',
      '```sql',
      run.scaling[0].sql,
      '```',
      '',
    )
  }
  lines.push('## Notes', '', ...run.notes.map((note) => `- ${note}`), '', '## Reproduce', '', ...REPRODUCE, '')
  const file = path.join(BENCH_DIR, 'RESULTS.md')
  fs.writeFileSync(file, lines.join('\n'))
  return file
}

const REPRODUCE = [
  '```sh',
  'npm install',
  'npm run bench                                   # everything, about 16 minutes (plus about a minute to prepare the datasets the first time)',
  'BENCH_DURATION=2 BENCH_WARMUP=1 npm run bench   # a quick pass while developing (about 7 minutes: the key-cache fills dominate)',
  'BENCH_SCALING=full npm run bench                # adds the 20M-row dataset and a 20M-row disclosure log (several minutes to prepare, about 15 GB)',
  'BENCH_DISCLOSURE_ROWS=0,200k,2M npm run bench   # the disclosure-log sizes for progress and enroll',
  'node bench/profile.mjs progress                 # where the time goes: top functions by self time',
  '```',
  '',
  'See bench/README.md for every knob.',
]
