/** Where things are: the repository, the built service, and the bench's own generated files. */
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const BENCH_DIR = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
export const ROOT = path.dirname(BENCH_DIR)
export const DIST = path.join(ROOT, 'dist')
export const DATA_DIR = path.join(BENCH_DIR, '.data')
/** The copy of dist/ a run measures (see build-service.mjs). */
export const SERVICE_DIST = path.join(DATA_DIR, 'dist')
export const CATALOG_DIR = path.join(ROOT, 'catalog')
export const LUA_SCRIPT = path.join(BENCH_DIR, 'lua', 'scenario.lua')

/** Imports a module of the built service, from the run's copy of dist/. */
export function importDist(relative) {
  return import(path.join(SERVICE_DIST, relative))
}
