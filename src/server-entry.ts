/**
 * `node dist/server.js`: compiles the server bundle (dist/server-bundle.cjs, built from
 * server.ts) from V8's code cache (code-cache.ts) and starts it; once it serves, the server
 * saves what V8 compiled for the next start, unless the cache was used as it was.
 *
 * Kept apart from the bundle and small (Node's own modules, the configuration and the two
 * modules below): everything it loads is compiled without the cache.
 */
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadCachedModule } from './code-cache.js'
import { loadConfig } from './config.js'
import { setHeapGrowth } from './heap-growth.js'
import type * as Server from './server.js'

// Before the bundle is compiled: V8 keys its code cache by the values of its flags, and this
// one is set at every start, so a cache made after setting it fits only a start that set it first.
try {
  setHeapGrowth(loadConfig().heapGrowingPercent)
} catch {
  // A configuration error: the server reports it, and exits.
}

const bundle = loadCachedModule(path.join(path.dirname(fileURLToPath(import.meta.url)), 'server-bundle.cjs'))
;(bundle.exports as typeof Server).run({ codeCache: bundle })
