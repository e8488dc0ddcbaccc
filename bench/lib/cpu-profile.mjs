/**
 * Reads a V8 .cpuprofile (what `node --cpu-prof` writes) and answers "where does the time go":
 * self time per function, and per source file or package. Locations in dist/ are mapped back
 * to src/*.ts through the build's source maps, so a line can be opened directly.
 *
 * Samples can be limited to a window of CLOCK_MONOTONIC microseconds (the clock of both the
 * profile's timestamps and process.hrtime), so start-up and warm-up do not dilute the figures.
 */
import fs from 'node:fs'
import { SourceMap } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { DIST, ROOT, SERVICE_DIST } from './paths.mjs'

const SPECIAL = new Set(['(idle)', '(program)', '(garbage collector)', '(root)'])

/** Self time of every profile node, in µs, over the samples inside [fromUs, toUs]. */
function selfTimes(profile, window) {
  const self = new Map()
  const { samples, timeDeltas } = profile
  let at = profile.startTime
  const times = new Array(samples.length)
  for (let i = 0; i < samples.length; i++) {
    at += timeDeltas[i]
    times[i] = at
  }
  let inWindow = 0
  for (let i = 0; i < samples.length; i++) {
    const t = times[i]
    if (window !== undefined && (t < window.fromUs || t > window.toUs)) continue
    // A sample lasts until the next one.
    const duration = (i + 1 < samples.length ? times[i + 1] : profile.endTime) - t
    if (duration <= 0) continue
    self.set(samples[i], (self.get(samples[i]) ?? 0) + duration)
    inWindow++
  }
  return { self, inWindow, first: times[0], last: times[times.length - 1] }
}

const maps = new Map()

function sourceMapFor(file) {
  if (!maps.has(file)) {
    let map
    try {
      // The run's copy of dist/ keeps dist/'s maps, whose sources are relative to dist/.
      const dir = path.dirname(file).startsWith(SERVICE_DIST)
        ? DIST + path.dirname(file).slice(SERVICE_DIST.length)
        : path.dirname(file)
      map = { consumer: new SourceMap(JSON.parse(fs.readFileSync(`${file}.map`, 'utf8'))), dir }
    } catch {
      map = undefined
    }
    maps.set(file, map)
  }
  return maps.get(file)
}

/** "src/http/access-control.ts:97" for built code, "node_modules/fastify/lib/x.js:12" otherwise. */
function location(callFrame) {
  const { url, lineNumber, columnNumber } = callFrame
  if (url === '') return '(native)'
  if (!url.startsWith('file://')) return `${url}:${lineNumber + 1}`
  const file = fileURLToPath(url)
  const map = sourceMapFor(file)
  if (map !== undefined) {
    const entry = map.consumer.findEntry(lineNumber, columnNumber)
    if (entry?.originalSource !== undefined) {
      const original = entry.originalSource.startsWith('file://')
        ? fileURLToPath(entry.originalSource)
        : path.resolve(map.dir, entry.originalSource)
      return `${path.relative(ROOT, original)}:${entry.originalLine + 1}`
    }
  }
  return `${path.relative(ROOT, file)}:${lineNumber + 1}`
}

/** The package or source file a location belongs to, for the per-module summary. */
function moduleOf(where) {
  const file = where.replace(/:\d+$/, '')
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file)
  if (pkg) return `${pkg[1]} (package)`
  if (file.startsWith('node:')) return 'node: internals'
  return file
}

export function analyseProfile(file, { window, top = 25 } = {}) {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8'))
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]))
  let { self, inWindow, first, last } = selfTimes(profile, window)
  let windowUsed = window !== undefined
  if (window !== undefined && inWindow === 0) {
    // The clocks did not line up after all: better the whole profile than nothing.
    ;({ self } = selfTimes(profile, undefined))
    windowUsed = false
  }
  const byFunction = new Map()
  const byModule = new Map()
  let total = 0
  let idle = 0
  for (const [id, us] of self) {
    const { callFrame } = nodes.get(id)
    total += us
    const name = callFrame.functionName || '(anonymous)'
    if (name === '(idle)') {
      idle += us
      continue
    }
    const where = SPECIAL.has(name) ? '' : location(callFrame)
    const key = `${name}\u0000${where}`
    byFunction.set(key, (byFunction.get(key) ?? 0) + us)
    const module = SPECIAL.has(name) ? name : moduleOf(where)
    byModule.set(module, (byModule.get(module) ?? 0) + us)
  }
  const busy = total - idle
  const rank = (map, n) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([key, us]) => ({ key, ms: us / 1000, share: busy > 0 ? us / busy : 0 }))
  return {
    totalMs: total / 1000,
    busyMs: busy / 1000,
    idleMs: idle / 1000,
    windowUsed,
    profileSpanUs: [first, last],
    functions: rank(byFunction, top).map(({ key, ms, share }) => {
      const [name, where] = key.split('\u0000')
      return { name, where, ms, share }
    }),
    modules: rank(byModule, 15).map(({ key, ms, share }) => ({ module: key, ms, share })),
  }
}

export function formatProfile(analysis) {
  const pct = (x) => `${(x * 100).toFixed(1).padStart(5)}%`
  const lines = [
    `CPU ${analysis.busyMs.toFixed(0)} ms busy, ${analysis.idleMs.toFixed(0)} ms idle${analysis.windowUsed ? ' (measured run only)' : ' (whole process lifetime)'}; shares are of busy time.`,
    '',
    `Top ${analysis.functions.length} functions by self time:`,
    '   self ms   share  function  (location)',
    ...analysis.functions.map(
      (f) => `${f.ms.toFixed(0).padStart(10)} ${pct(f.share)}  ${f.name}${f.where ? `  (${f.where})` : ''}`,
    ),
    '',
    'Self time by source file or package:',
    ...analysis.modules.map((m) => `${m.ms.toFixed(0).padStart(10)} ${pct(m.share)}  ${m.module}`),
  ]
  return lines.join('\n')
}
