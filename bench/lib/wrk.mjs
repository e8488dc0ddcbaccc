/**
 * wrk, the load generator: found on PATH or installed from Debian (root only), then run with
 * bench/lua/scenario.lua, whose done() prints exact percentiles and status counts as JSON.
 */
import { spawn, spawnSync } from 'node:child_process'
import path from 'node:path'
import { BENCH_DIR, LUA_SCRIPT } from './paths.mjs'
import { openLoopClient } from './open-loop-client.mjs'
import { LOAD_CPU, pinned } from './pinning.mjs'

function wrkVersion() {
  const result = spawnSync('wrk', ['-v'], { encoding: 'utf8' })
  if (result.error) return undefined
  // `wrk -v` prints "wrk 4.1.0 [epoll] Copyright ..." and exits 1.
  return /wrk (\S+)/.exec(`${result.stdout}${result.stderr}`)?.[1] ?? 'unknown'
}

/** The wrk version, installing the Debian package when possible; exits the process otherwise. */
export function ensureWrk() {
  let version = wrkVersion()
  if (version !== undefined) return version
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0
  if (isRoot && spawnSync('which', ['apt-get']).status === 0) {
    console.log('wrk is not installed: apt-get install -y wrk')
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
    let install = spawnSync('apt-get', ['install', '-y', 'wrk'], { stdio: 'inherit', env })
    if (install.status !== 0) {
      // A fresh container often has no package lists yet.
      spawnSync('apt-get', ['update'], { stdio: 'inherit', env })
      install = spawnSync('apt-get', ['install', '-y', 'wrk'], { stdio: 'inherit', env })
    }
    version = wrkVersion()
    if (version !== undefined) return version
  }
  console.error(
    [
      'The benchmark needs wrk (https://github.com/wg/wrk) on PATH, version 4.1 or later.',
      '  Debian/Ubuntu: sudo apt-get install -y wrk',
      '  macOS:         brew install wrk',
      '  From source:   git clone https://github.com/wg/wrk && make -C wrk && cp wrk/wrk /usr/local/bin/',
    ].join('\n'),
  )
  process.exit(1)
}

/**
 * Runs wrk for `seconds` against `baseUrl` with the scenario's Lua options and returns the
 * parsed result: req/s, latency percentiles in ms, status counts and errors (statuses outside
 * `expect`, plus socket errors and timeouts).
 */
export function runWrk({ baseUrl, seconds, connections = 64, threads = 1, lua, expect }) {
  const args = [
    `-t${threads}`,
    `-c${connections}`,
    `-d${seconds}s`,
    // Long enough that a slow response is a latency sample, not a timeout error.
    '--timeout',
    '10s',
    '-s',
    LUA_SCRIPT,
    baseUrl,
    '--',
    ...Object.entries(lua).map(([name, value]) => `${name}=${value}`),
  ]
  const [command, argv] = pinned(LOAD_CPU, 'wrk', args)
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    let stopping = false
    child.stdout.on('data', (chunk) => {
      stdout += chunk
      // With a request limit, each thread announces it has finished; SIGINT makes wrk stop early
      // and still print its summary.
      if (lua.limit !== undefined && !stopping && stdout.split('LIMIT_REACHED').length - 1 >= threads) {
        stopping = true
        child.kill('SIGINT')
      }
    })
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => {
      const line = stdout.split('\n').find((l) => l.startsWith('BENCH_RESULT '))
      if (code !== 0 || line === undefined) {
        reject(new Error(`wrk failed (exit ${code}):\n${stdout}\n${stderr}`))
        return
      }
      resolve(summarise(JSON.parse(line.slice('BENCH_RESULT '.length)), expect))
    })
  })
}

/**
 * The same measurement with another generator: with `rate` undefined, a closed loop through
 * Node's HTTP client (bench/latency-client.mjs; progress reads only: the latency cross-check);
 * with a `rate`, an open loop at that many requests a second, latency counted from each
 * request's due time (any of the scenario modes), by bench/open-loop-client.c where it could be
 * built (lib/open-loop-client.mjs), else by latency-client.mjs --rate.
 */
export function runLatencyClient({ baseUrl, seconds, connections = 64, lua, expect, rate }) {
  const binary = rate === undefined ? undefined : openLoopClient().binary
  const [command, argv] =
    binary === undefined
      ? pinned(LOAD_CPU, process.execPath, [
          path.join(BENCH_DIR, 'latency-client.mjs'),
          baseUrl,
          lua.file,
          String(seconds),
          String(connections),
          ...nodeOpenLoopOptions(lua, rate),
        ])
      : pinned(LOAD_CPU, binary, [
          new URL(baseUrl).hostname,
          new URL(baseUrl).port,
          lua.file,
          String(seconds),
          String(connections),
          String(rate),
          lua.mode,
          lua.path ?? '-',
          lua.etag ?? '-',
        ])
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'inherit'] })
    let stdout = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.on('error', reject)
    child.on('close', (code) => {
      const line = stdout.split('\n').find((l) => l.startsWith('BENCH_RESULT '))
      if (code !== 0 || line === undefined) reject(new Error(`latency client failed (exit ${code}):\n${stdout}`))
      else resolve(summarise(JSON.parse(line.slice('BENCH_RESULT '.length)), expect))
    })
  })
}

/** latency-client.mjs's options for an open loop at `rate`; none for its closed loop. */
function nodeOpenLoopOptions(lua, rate) {
  if (rate === undefined) return []
  return [
    '--rate',
    String(rate),
    '--mode',
    lua.mode,
    ...(lua.path === undefined ? [] : ['--path', lua.path]),
    ...(lua.etag === undefined ? [] : ['--etag', lua.etag]),
  ]
}

function summarise(raw, expect) {
  const expected = new Set(expect)
  let unexpected = 0
  for (const [status, count] of Object.entries(raw.statuses)) if (!expected.has(Number(status))) unexpected += count
  const socket = raw.errors.connect + raw.errors.read + raw.errors.write + raw.errors.timeout
  const ms = (us) => us / 1000
  return {
    requests: raw.requests,
    seconds: raw.durationUs / 1e6,
    rps: raw.requests / (raw.durationUs / 1e6),
    latencyMs: {
      mean: ms(raw.latencyUs.mean),
      p50: ms(raw.latencyUs.p50),
      p90: ms(raw.latencyUs.p90),
      p99: ms(raw.latencyUs.p99),
      p999: ms(raw.latencyUs.p999),
      max: ms(raw.latencyUs.max),
    },
    statuses: raw.statuses,
    errors: unexpected + socket,
    socketErrors: raw.errors,
    openLoop: raw.openLoop,
  }
}
