/**
 * What belongs to one engine stays in its folder (src/storage/sqlite/, src/storage/postgres/),
 * and only the entry (src/storage/connection.ts) reaches into either: everything else sees the
 * `Storage` it returns. The imports are read with TypeScript's own pre-processor (static,
 * type-only and dynamic imports, and re-exports), as the compiler sees them.
 */
import fs from 'node:fs'
import path from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const SRC = path.resolve(import.meta.dirname, '../../src')
const ENTRY = 'storage/connection.ts'
const FOLDERS = { sqlite: 'storage/sqlite/', postgres: 'storage/postgres/' } as const
/** Each engine's driver, which only its folder may load. */
const DRIVERS = { sqlite: 'better-sqlite3', postgres: 'pg' } as const

/**
 * The shared storage modules that still tell the engines apart, each for a reason the docs
 * give: the migrations' DDL differs by dialect, and three statements are written once per
 * dialect (an enroll's tier change, which PostgreSQL makes in one locking statement; a change-log
 * entry, one statement there; the lock on an organisation's members, a row lock there) because
 * SQLite has neither row locks nor data-modifying WITH.
 */
const DIALECT_BRANCHES = [
  'storage/membership-repository.ts',
  'storage/migrate.ts',
  // Locks the operators FOR UPDATE on PostgreSQL; a SQLite writer runs alone (as memberships).
  'storage/operator-repository.ts',
  'storage/student-change-log.ts',
  'storage/student-repository.ts',
]

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(file)
    return entry.name.endsWith('.ts') ? [file] : []
  })
}

/** Every module of src/ (relative path) with what it imports: modules of src/ (relative paths) and packages. */
function imports(): Map<string, string[]> {
  const found = new Map<string, string[]>()
  for (const file of sourceFiles(SRC)) {
    const { importedFiles } = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true)
    found.set(
      path.relative(SRC, file),
      importedFiles.map(({ fileName }) =>
        fileName.startsWith('.')
          ? path.relative(SRC, path.resolve(path.dirname(file), fileName)).replace(/\.js$/, '.ts')
          : fileName,
      ),
    )
  }
  return found
}

const folderOf = (module: string) =>
  (Object.keys(FOLDERS) as (keyof typeof FOLDERS)[]).find((engine) => module.startsWith(FOLDERS[engine]))

describe('storage by engine', () => {
  const graph = imports()

  it('reads the whole of src/, both engine folders included', () => {
    expect(graph.size).toBeGreaterThan(100)
    expect([...graph.keys()].filter((module) => folderOf(module) === 'sqlite').length).toBeGreaterThan(3)
    expect([...graph.keys()].filter((module) => folderOf(module) === 'postgres').length).toBeGreaterThan(3)
  })

  it("loads each engine's driver only in that engine's folder", () => {
    const outside: string[] = []
    for (const [module, imported] of graph) {
      for (const [engine, driver] of Object.entries(DRIVERS)) {
        if (imported.includes(driver) && folderOf(module) !== engine) outside.push(`${module} -> ${driver}`)
      }
    }
    expect(outside).toEqual([])
  })

  it('is reached only through the entry, and neither engine folder imports the other', () => {
    const reaching: string[] = []
    for (const [module, imported] of graph) {
      for (const target of imported) {
        const engine = folderOf(target)
        if (engine !== undefined && module !== ENTRY && folderOf(module) !== engine)
          reaching.push(`${module} -> ${target}`)
      }
    }
    expect(reaching).toEqual([])
  })

  it('leaves engine branches in shared storage modules only where the SQL differs by dialect', () => {
    const branching = [...graph.keys()]
      // The entry chooses, and storage.ts names the engines for `Storage.engine`.
      .filter((module) => module.startsWith('storage/') && folderOf(module) === undefined)
      .filter((module) => module !== ENTRY && module !== 'storage/storage.ts')
      .filter((module) => !module.startsWith('storage/migrations/'))
      .filter((module) =>
        /\bengine\b|PostgresAdapter|SqliteAdapter|'sqlite'|'postgres'/.test(
          fs.readFileSync(path.join(SRC, module), 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, ''),
        ),
      )
    expect(branching.sort()).toEqual(DIALECT_BRANCHES)
  })
})
