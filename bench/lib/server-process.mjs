/**
 * Starts a server process the way production does (`node dist/server.js`, environment only),
 * pinned to the server core, and measures "ready to serve": from spawn until /readyz first
 * answers 200.
 */
import { spawn } from 'node:child_process'
import net from 'node:net'
import path from 'node:path'
import { ROOT, SERVICE_DIST } from './paths.mjs'
import { pinned } from './pinning.mjs'

/** Every variable the service reads (docs/configuration.md), so none leaks in from the shell. */
const SERVICE_VARIABLES = [
  'PORT',
  'HOST',
  'PUBLIC_URL',
  'DATABASE_URL',
  'LOG_LEVEL',
  'RATE_LIMIT',
  'RATE_LIMIT_WINDOW_SECONDS',
  'ORGANISATION_RATE_LIMIT',
  'MAX_KEYS_PER_ORGANISATION',
  'AUTH_FAILURE_LIMIT',
  'SIGN_IN_FAILURE_LIMIT',
  'SIGN_UP_LIMIT',
  'HEADERS_TIMEOUT_MS',
  'REQUEST_TIMEOUT_MS',
  'KEEP_ALIVE_TIMEOUT_MS',
  'MAX_CONNECTIONS_PER_ADDRESS',
  'DISCLOSURE_SEGMENT_ROWS',
  'DISCLOSURE_SEAL_HORIZON_MS',
  'REDIS_COMMAND_TIMEOUT_MS',
  'BODY_LIMIT_BYTES',
  'TRUST_PROXY',
  'SEED_DEMO',
  'CATALOG_DIR',
  'CHANGE_POLL_MS',
  'STORAGE_TIMEOUT_MS',
  'SQLITE_SYNCHRONOUS',
  'DB_POOL_SIZE',
  'REDIS_URL',
  'REDIS_KEY_PREFIX',
  'WORKERS',
  'METRICS',
  'METRICS_TOKEN',
  'METRICS_PORT',
  'REQUEST_LOG',
  'NODE_ENV',
]

const READY_TIMEOUT_MS = 60_000
const LOG_TAIL_CHARS = 16_000

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

/**
 * Production settings plus `overrides`; nothing else from the calling shell reaches the service.
 * The organisation limit is lifted: the dataset spreads 50,000 keys over 500 organisations, so
 * at the rates measured every organisation would be over its 300 a minute, and the scenarios
 * measure what a request costs, not that limit (the hammer scenario measures a key's own 429).
 */
export function serviceEnv(overrides) {
  const env = { ...process.env }
  for (const name of SERVICE_VARIABLES) delete env[name]
  return {
    ...env,
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    SEED_DEMO: 'false',
    ORGANISATION_RATE_LIMIT: '10000000',
    ...overrides,
  }
}

async function answers(url) {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(500) })
    await response.arrayBuffer()
    return response.status === 200
  } catch {
    return false
  }
}

/**
 * Spawns `script` (default: server.js of the run's copy of dist/) with `env` on `cpu` and resolves once /readyz
 * answers 200, with the time that took. `nodeArgs` go before the script (e.g. --cpu-prof).
 */
export async function startServer({ label, env, cpu, script = path.join(SERVICE_DIST, 'server.js'), nodeArgs = [] }) {
  const port = await freePort()
  const baseUrl = `http://127.0.0.1:${port}`
  const [command, args] = pinned(cpu, process.execPath, [...nodeArgs, script])
  const started = performance.now()
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let log = ''
  const keep = (chunk) => {
    log = (log + chunk).slice(-LOG_TAIL_CHARS)
  }
  child.stdout.on('data', keep)
  child.stderr.on('data', keep)
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
  let exit
  exited.then((value) => (exit = value))

  while (!(await answers(`${baseUrl}/readyz`))) {
    if (exit !== undefined) throw new Error(`${label} exited before it was ready (${JSON.stringify(exit)}):\n${log}`)
    if (performance.now() - started > READY_TIMEOUT_MS) {
      child.kill('SIGKILL')
      throw new Error(`${label} was not ready within ${READY_TIMEOUT_MS} ms:\n${log}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  const readyMs = performance.now() - started

  return {
    label,
    pid: child.pid,
    baseUrl,
    readyMs,
    log: () => log,
    /** SIGTERM (the service finishes in-flight requests and exits; --cpu-prof writes its file). */
    async stop() {
      if (exit !== undefined) return exit
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000)
      const result = await exited
      clearTimeout(timer)
      return result
    },
  }
}
