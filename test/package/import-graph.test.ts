/**
 * The shape of src/'s imports: no module reaches itself through others (type imports included),
 * and the fast path (src/http/fast/) is a fence: the rest of the code enters it through its
 * index only, and it imports no route, no plugin and nothing of the dashboard. The layers run one
 * way: imports/ (the one import run, its reading and batching) knows none of its users, and
 * roster/ (reading OneRoster exports) knows neither storage, nor the cases that import them, nor
 * the CLI, the dashboard or the HTTP routes.
 */
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const SRC = path.resolve(import.meta.dirname, '../../src')
const FAST = path.join(SRC, 'http', 'fast')

/** Every relative import and re-export of each module under `root`, as resolved .ts paths. */
export function importGraph(root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  const files = fs
    .readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
  for (const file of files) {
    const from = path.join(root, file)
    const text = fs.readFileSync(from, 'utf8')
    const specifiers = [
      ...text.matchAll(/^(?:import|export)\b[^'"]*?\bfrom\s+'([^']+)'/gms),
      ...text.matchAll(/^import\s+'([^']+)'/gm),
      ...text.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g),
    ].map((match) => match[1]!)
    graph.set(
      from,
      specifiers
        .filter((specifier) => specifier.startsWith('.'))
        .map((specifier) => path.resolve(path.dirname(from), specifier.replace(/\.js$/, '.ts'))),
    )
  }
  return graph
}

/** One cycle of the graph, as a list of modules from one back to itself, or undefined. */
export function findCycle(graph: Map<string, string[]>): string[] | undefined {
  const done = new Set<string>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const visit = (module: string): string[] | undefined => {
    if (onStack.has(module)) return [...stack.slice(stack.indexOf(module)), module]
    if (done.has(module) || !graph.has(module)) return undefined
    stack.push(module)
    onStack.add(module)
    for (const next of graph.get(module)!) {
      const cycle = visit(next)
      if (cycle !== undefined) return cycle
    }
    stack.pop()
    onStack.delete(module)
    done.add(module)
    return undefined
  }
  for (const module of graph.keys()) {
    const cycle = visit(module)
    if (cycle !== undefined) return cycle
  }
  return undefined
}

const relative = (file: string) => path.relative(SRC, file)
const inFast = (file: string) => file.startsWith(`${FAST}${path.sep}`)
const inFolder = (folder: string) => (file: string) => file.startsWith(path.join(SRC, folder) + path.sep)

/** The imports from modules of `folder` into modules of any of `others`, as `from -> to`. */
function importsInto(graph: Map<string, string[]>, folder: string, others: readonly string[]): string[] {
  const forbidden = others.map(inFolder)
  return [...graph]
    .filter(([from]) => inFolder(folder)(from))
    .flatMap(([from, targets]) =>
      targets
        .filter((target) => forbidden.some((inOther) => inOther(target)))
        .map((target) => `${relative(from)} -> ${relative(target)}`),
    )
}

describe('the import graph of src/', () => {
  const graph = importGraph(SRC)

  it('reads the imports it checks (multi-line lists, type imports and re-exports included)', () => {
    expect(graph.size).toBeGreaterThan(100)
    const app = graph.get(path.join(SRC, 'app.ts'))!
    expect(app).toContain(path.join(FAST, 'index.ts'))
    expect(app).toContain(path.join(SRC, 'http', 'app-types.ts'))
    // Every import resolves to a module that exists: a misread path would hide an edge.
    for (const [from, targets] of graph)
      for (const target of targets) expect(graph.has(target), `${relative(from)} -> ${relative(target)}`).toBe(true)
  })

  it('has no cycle', () => {
    expect(findCycle(graph)?.map(relative)).toBeUndefined()
  })

  it('finds a cycle when there is one (the check itself)', () => {
    const cyclic = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', []],
    ])
    expect(findCycle(cyclic)).toEqual(['a', 'b', 'c', 'a'])
    expect(
      findCycle(
        new Map([
          ['a', ['b']],
          ['b', []],
        ]),
      ),
    ).toBeUndefined()
  })

  it('runs one way between the floors: no folder of src/ (or file at its top) reaches itself through others', () => {
    // A cycle between rooms is what would force an import to run back up: without one, an order of floors exists.
    const room = (file: string) => relative(file).split(path.sep)[0]!
    const rooms = new Map<string, string[]>()
    for (const [from, targets] of graph) {
      const edges = rooms.get(room(from)) ?? []
      for (const target of targets) if (room(target) !== room(from)) edges.push(room(target))
      rooms.set(room(from), edges)
    }
    expect(rooms.size).toBeGreaterThan(15)
    expect(findCycle(rooms)).toBeUndefined()
  })

  it('enters the fast path through its index only', () => {
    const entries = [...graph]
      .filter(([from]) => !inFast(from))
      .flatMap(([from, targets]) => targets.filter(inFast).map((target) => `${relative(from)} -> ${relative(target)}`))
    expect(entries).toEqual(['app.ts -> http/fast/index.ts'])
  })

  it('keeps what only the fast path uses inside it: no module outside http/fast/ is imported only from inside it', () => {
    const importers = new Map<string, Set<string>>()
    for (const [from, targets] of graph)
      for (const target of targets) importers.set(target, (importers.get(target) ?? new Set()).add(from))
    const onlyFast = [...importers]
      .filter(([module, from]) => !inFast(module) && [...from].every(inFast))
      .map(([module]) => relative(module))
    expect(onlyFast).toEqual([])
  })

  it('keeps imports/ below its users: it imports nothing of the CLI, roster, dashboard, HTTP, services or cases', () => {
    const modules = [
      'csv.ts',
      'zip-reader.ts',
      'problems.ts',
      'write-batch-size.ts',
      'import-batches.ts',
      'import-run.ts',
    ]
    for (const module of modules) expect(graph.has(path.join(SRC, 'imports', module)), `imports/${module}`).toBe(true)
    expect(importsInto(graph, 'imports', ['cli', 'roster', 'dashboard', 'http', 'services', 'cases'])).toEqual([])
  })

  it('keeps storage/ below the cases: it imports nothing of cases/, HTTP, the dashboard, the CLI or imports/', () => {
    expect(graph.has(path.join(SRC, 'cases', 'ended-agreement.ts'))).toBe(true)
    expect(importsInto(graph, 'storage', ['cases', 'http', 'dashboard', 'cli', 'imports'])).toEqual([])
  })

  it('keeps the cases below their entry points: they import nothing of HTTP, the dashboard or the CLI', () => {
    expect(importsInto(graph, 'cases', ['http', 'dashboard', 'cli'])).toEqual([])
  })

  it('keeps roster/ to reading OneRoster exports: it imports nothing of storage, the cases or the entry points', () => {
    expect(importsInto(graph, 'roster', ['storage', 'cases', 'cli', 'dashboard', 'http'])).toEqual([])
  })

  it('keeps the fast path away from routes, plugins and the dashboard', () => {
    const forbidden = (target: string) =>
      target.startsWith(path.join(SRC, 'http', 'routes') + path.sep) ||
      target.startsWith(path.join(SRC, 'dashboard') + path.sep) ||
      target === path.join(SRC, 'http', 'api-v1.ts') ||
      target === path.join(SRC, 'app.ts')
    const reached = new Set<string>()
    const walk = (module: string) => {
      for (const next of graph.get(module) ?? []) {
        if (reached.has(next)) continue
        reached.add(next)
        walk(next)
      }
    }
    for (const module of graph.keys()) if (inFast(module)) walk(module)
    expect([...reached].filter(forbidden).map(relative)).toEqual([])
  })
})
