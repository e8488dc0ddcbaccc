/**
 * Fills a compile cache that the service only reads (src/compile-cache-folder.ts, "read-only"),
 * at install and after every upgrade, from the release folder, as root, with the Node the unit
 * runs and the service's environment (V8 keys cached code by its flags, which
 * HEAP_GROWING_PERCENT sets):
 *
 *   cd /opt/curriculum-api && sudo sh -c 'set -a; . /etc/curriculum-api/env;
 *     /usr/bin/node scripts/fill-compile-cache.mjs "$COMPILE_CACHE_DIR" curriculum'
 *
 * 1. Starts the built server once as the service's user (Node keeps a cache per user, so only a
 *    start as that user makes one the service reads) on an in-memory database and a port of its
 *    own, into a new folder beside the cache, and stops it once the cache is written.
 * 2. Gives that folder to root: readable by everyone, writable by root alone.
 * 3. Starts the server again as the service's user on it, and fails unless Node read the
 *    bundle's compiled code from it.
 * 4. Only then puts it in the old cache's place. Restart the service to use it.
 *
 * The new folder is beside the cache, where the running service cannot write (the unit's
 * ProtectSystem=strict), so nothing but this start of the release's code fills it.
 */
import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
const SERVER = path.join(ROOT, 'dist', 'server.js')
const START_LIMIT_MS = 60_000

function fail(message, code = 1) {
  process.stderr.write(`fill-compile-cache: ${message}\n`)
  process.exit(code)
}

/** Starts the server as `user` and stops it once its output matches `until`; resolves with its output. */
async function runServer(user, env, until, stderrFile) {
  const stderr = fs.openSync(stderrFile, 'w')
  const child = spawn(process.execPath, [SERVER], {
    cwd: ROOT,
    env,
    uid: user.uid,
    gid: user.gid,
    stdio: ['ignore', 'pipe', stderr],
  })
  fs.closeSync(stderr)
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)))
  let out = ''
  const matched = new Promise((resolve) =>
    child.stdout.on('data', (chunk) => {
      out += chunk
      if (until.test(out)) resolve('matched')
    }),
  )
  let timer
  const late = new Promise((resolve) => {
    timer = setTimeout(() => resolve('late'), START_LIMIT_MS)
  })
  const first = await Promise.race([matched, exited.then(() => 'exited'), late])
  clearTimeout(timer)
  child.kill(first === 'matched' ? 'SIGTERM' : 'SIGKILL')
  const status = await exited
  if (first === 'matched') return out
  const why = first === 'late' ? `did not get there within ${START_LIMIT_MS / 1000} s` : `exited (${status})`
  throw new Error(`the server ${why}:\n${out}${fs.readFileSync(stderrFile, 'utf8')}`)
}

/** Gives `dir` and everything in it to root: folders 0755, files 0644; refuses anything else. */
function handToRoot(dir) {
  const entries = [dir, ...fs.readdirSync(dir, { recursive: true }).map((name) => path.join(dir, name))]
  for (const file of entries) {
    const stat = fs.lstatSync(file)
    if (!stat.isDirectory() && !stat.isFile()) throw new Error(`${file} is neither a file nor a folder`)
    fs.chownSync(file, 0, 0)
    fs.chmodSync(file, stat.isDirectory() ? 0o755 : 0o644)
  }
}

const [target, userName] = process.argv.slice(2)
if (target === undefined || userName === undefined)
  fail('usage: node scripts/fill-compile-cache.mjs <cache folder> <service user>', 2)
if (process.getuid?.() !== 0)
  fail('run it as root: it starts the server as the service user and hands the cache to root')
if (!fs.existsSync(SERVER)) fail(`${SERVER} is missing: build the release first (npm run build)`)
let user
try {
  const id = (flag) => Number(execFileSync('id', [flag, userName], { encoding: 'utf8' }).trim())
  user = { uid: id('-u'), gid: id('-g') }
} catch {
  fail(`no user ${userName}`)
}
if (user.uid === 0) fail('the service user must not be root: root can write any cache')

const cache = path.resolve(target)
const parent = path.dirname(cache)
fs.mkdirSync(parent, { recursive: true, mode: 0o755 })
const fresh = path.join(parent, `.${path.basename(cache)}.fill-${process.pid}`)
const replaced = path.join(parent, `.${path.basename(cache)}.old-${process.pid}`)
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'curriculum-fill-'))
let failure
try {
  fs.mkdirSync(fresh, { mode: 0o700 })
  fs.chownSync(fresh, user.uid, user.gid)
  fs.chownSync(scratch, user.uid, user.gid)
  const env = { ...process.env }
  delete env.NODE_COMPILE_CACHE
  Object.assign(env, {
    COMPILE_CACHE_DIR: fresh,
    // Nothing of the service's is touched: no database, no port, no upload folder of its.
    DATABASE_URL: 'sqlite::memory:',
    HOST: '127.0.0.1',
    PORT: '0',
    METRICS_PORT: '',
    WORKERS: '1',
    SEED_DEMO: 'false',
    ROSTER_UPLOAD_DIR: path.join(scratch, 'roster-uploads'),
    LOG_LEVEL: 'debug',
  })
  await runServer(user, env, /"msg":"compile cache saved"/, path.join(scratch, 'fill.log'))
  handToRoot(fresh)

  const debug = path.join(scratch, 'check.log')
  const out = await runServer(user, { ...env, NODE_DEBUG_NATIVE: 'COMPILE_CACHE' }, /Server listening at/, debug)
  if (!out.includes('compile cache on (read-only)'))
    throw new Error(`the server did not take the filled cache as read-only:\n${out}`)
  if (!/cache for (?:CommonJS )?\S*server-bundle\.cjs was accepted/.test(fs.readFileSync(debug, 'utf8')))
    throw new Error(
      `Node did not read the server's compiled code from the filled cache:\n${fs.readFileSync(debug, 'utf8')}`,
    )

  if (fs.existsSync(cache)) fs.renameSync(cache, replaced)
  fs.renameSync(fresh, cache)
  process.stdout.write(
    `${cache}: filled for ${userName} (uid ${user.uid}) by Node ${process.version}, owned by root; a start as ` +
      `${userName} read the server's compiled code from it. Restart the service to use it.\n`,
  )
} catch (error) {
  failure = `${error instanceof Error ? error.message : String(error)}\nthe cache in place, if any, is unchanged`
} finally {
  for (const dir of [fresh, replaced, scratch]) fs.rmSync(dir, { recursive: true, force: true })
}
if (failure !== undefined) fail(failure)
