/**
 * The last step of `npm run build`: starts the server bundle once, on an empty database in
 * memory, and writes V8's code cache of everything compiled by the time it serves, then exits.
 * The first `node dist/server.js` after a build then starts as fast as later ones, and so does
 * every start where dist/ cannot be written (a read-only image, where the server cannot save
 * the cache itself).
 *
 * The server runs in a child process with an environment of its own: of the caller's, only
 * HEAP_GROWING_PERCENT (the V8 flag the cache must match) and what Node needs to run, so the
 * build never opens a configured database, Redis or port. Whatever becomes of the child, the
 * build goes on: without a cache the server compiles its code at start, as it always could.
 */
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { loadServer } from './compiled-server.js'

const CHILD = 'warm-up'
const TIMEOUT_MS = 60_000

if (process.argv[2] === CHILD) warmUp()
else {
  const { HEAP_GROWING_PERCENT, PATH, HOME, SYSTEMROOT, TMPDIR, TEMP, TMP } = process.env
  const inherited = { HEAP_GROWING_PERCENT, PATH, HOME, SYSTEMROOT, TMPDIR, TEMP, TMP }
  const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), CHILD], {
    env: {
      ...Object.fromEntries(Object.entries(inherited).filter(([, value]) => value !== undefined)),
      DATABASE_URL: 'sqlite::memory:',
      HOST: '127.0.0.1',
      PORT: '0',
      SEED_DEMO: 'false',
      LOG_LEVEL: 'error',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
    timeout: TIMEOUT_MS,
  })
  if (child.status !== 0) {
    const outcome = child.error?.message ?? (child.signal === null ? `exit ${child.status}` : `signal ${child.signal}`)
    process.stderr.write(`warm-code-cache: no code cache written (${outcome}); the server compiles its code at start\n`)
  }
}

function warmUp(): void {
  const { server, codeCache } = loadServer()
  if (codeCache.cache === 'used') return
  server.run({
    codeCache: {
      cache: codeCache.cache,
      save() {
        const written = codeCache.save()
        process.exit(written ? 0 : 1)
      },
    },
  })
}
