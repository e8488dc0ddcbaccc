/**
 * `node dist/server.js`: compiles the server bundle from V8's code cache (compiled-server.ts)
 * and starts it; once it serves, the server saves what V8 compiled for the next start, unless
 * the cache was used as it was (`npm run build` makes one, warm-code-cache.ts).
 *
 * Kept apart from the bundle and small (Node's own modules, the configuration and a few
 * modules of its own): everything it loads is compiled without the cache.
 */
import { loadServer } from './compiled-server.js'

const { server, codeCache } = loadServer()
server.run({ codeCache })
