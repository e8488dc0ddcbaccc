/**
 * Timings of the service that the bench plans around, read from the build under measurement
 * rather than copied here, so the bench follows when they change: how often key usage is
 * written (USAGE_FLUSH_MS in src/app.ts) and how long a key record stays cached (the maxAgeMs
 * default in src/services/key-cache.ts). Undefined when the build no longer says.
 */
import fs from 'node:fs'
import path from 'node:path'
import { SERVICE_DIST } from './paths.mjs'

/** A product of numeric literals such as `15 * 60_000`, in ms. */
function evaluate(expression) {
  const factors = expression.split('*').map((part) => Number(part.trim().replace(/_/g, '')))
  return factors.every(Number.isFinite) ? factors.reduce((a, b) => a * b, 1) : undefined
}

function constant(file, pattern) {
  try {
    const match = pattern.exec(fs.readFileSync(path.join(SERVICE_DIST, file), 'utf8'))
    const ms = match === null ? undefined : evaluate(match[1])
    return ms === undefined ? undefined : ms / 1000
  } catch {
    return undefined
  }
}

export function usageFlushSeconds() {
  return constant('app.js', /USAGE_FLUSH_MS\s*=\s*([\d_\s*]+);/)
}

export function keyCacheSeconds() {
  return constant(path.join('services', 'key-cache.js'), /maxAgeMs\s*\?\?\s*([\d_\s*]+)[;)]/)
}
