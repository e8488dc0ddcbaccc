/**
 * The server bundle (dist/server-bundle.cjs, built from server.ts), compiled from V8's code
 * cache (code-cache.ts) with the V8 flag the server sets applied first: V8 keys its cache by
 * the values of its flags, so a cache made after setting one fits only a start that set it
 * before compiling.
 */
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { type CachedModule, loadCachedModule } from './code-cache.js'
import { loadConfig } from './config.js'
import { setHeapGrowth } from './heap-growth.js'
import type * as Server from './server.js'

export interface CompiledServer {
  readonly server: typeof Server
  readonly codeCache: CachedModule
}

export function loadServer(): CompiledServer {
  try {
    setHeapGrowth(loadConfig().heapGrowingPercent)
  } catch {
    // A configuration error: the server reports it, and exits.
  }
  const codeCache = loadCachedModule(path.join(path.dirname(fileURLToPath(import.meta.url)), 'server-bundle.cjs'))
  return { server: codeCache.exports as typeof Server, codeCache }
}
