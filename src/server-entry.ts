/**
 * `node dist/server.js`: turns on Node's compile cache (compile-cache.ts), starts OpenTelemetry
 * when OTEL_EXPORTER_OTLP_ENDPOINT is set (observability/tracing.ts), then loads the server
 * bundle and starts it. Kept apart from the bundle and small, since only code loaded after the
 * cache is on can come from it, and only modules required after tracing starts are instrumented.
 */
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { enableCompileCache } from './compile-cache.js'
import { type Config, loadConfig } from './config.js'
import { setHeapGrowth } from './heap-growth.js'

/** Variables, so that the entry's bundler leaves loading them to run time. */
const SERVER_BUNDLE = './server-bundle.cjs'
const TRACING = './observability/tracing.js'

let config: Config | undefined
try {
  config = loadConfig()
} catch {
  // A configuration error: the server reports it, and exits.
}
// V8 keys cached code by the values of its flags: set this one before anything comes from the cache.
if (config !== undefined) setHeapGrowth(config.heapGrowingPercent)
const compileCache = enableCompileCache(config?.compileCacheDir, path.dirname(fileURLToPath(import.meta.url)))
// Read here rather than from the configuration, which is undefined when it is invalid: the
// server then reports that, traced or not.
const spans = process.env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim()
  ? ((await import(TRACING)) as typeof import('./observability/tracing.js')).startTracing()
  : undefined
const server: typeof import('./server.js') = createRequire(import.meta.url)(SERVER_BUNDLE)
server.run({ compileCache, ...(spans === undefined ? {} : { spans }) })
