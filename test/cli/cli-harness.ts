/**
 * Runs the built `curriculum` command as a real child process, the way an operator does, on a
 * fresh SQLite file per test.
 */
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { sql } from 'kysely'
import { afterAll, beforeAll } from 'vitest'
import { openStorage, type Storage } from '../../src/storage/connection.js'
import { migrateTestStorage } from '../helper.js'
import { rowCount } from '../support/row-count.js'

export const ROOT = path.resolve(import.meta.dirname, '../..')
export const CLI = path.join(ROOT, 'dist/cli/index.js')
export const CATALOG_DIR = path.join(ROOT, 'catalog')

/** dist/ is built once per test run by test/global-setup.ts; fail clearly if it is missing. */
export function ensureBuilt(): void {
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: the test run's global setup builds it`)
}

const created: string[] = []

export function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'curriculum-cli-'))
  created.push(dir)
  return dir
}

/** Removes the folders and databases this test file made; call from afterAll. */
export function removeTempDirs(): void {
  for (const dir of created.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
}

export function newDatabaseUrl(): string {
  return `sqlite:${path.join(tempDir(), 'cli.db')}`
}

const schemas: string[] = []

/**
 * The engines a test may run the CLI on: SQLite, and PostgreSQL when TEST_POSTGRES_URL names one
 * (a schema of its own per database, dropped by dropSchemas).
 */
export const ENGINES: readonly (readonly [string, () => string])[] = [
  ['SQLite', newDatabaseUrl],
  ...(process.env.TEST_POSTGRES_URL
    ? [
        [
          'PostgreSQL',
          () => {
            // As test/helper.ts's freshDatabaseUrl, whose module would load the whole app here.
            const url = new URL(process.env.TEST_POSTGRES_URL!)
            url.searchParams.set('schema', `t_${randomBytes(6).toString('hex')}`)
            schemas.push(url.toString())
            return url.toString()
          },
        ] as const,
      ]
    : []),
]

/** Drops the PostgreSQL schemas this test file made; call from afterAll. */
export async function dropSchemas(): Promise<void> {
  for (const url of schemas.splice(0)) {
    const storage = openStorage(url, { busyTimeoutMs: 5000 })
    try {
      await sql`drop schema if exists ${sql.id(storage.schema!)} cascade`.execute(storage.db)
    } finally {
      await storage.close()
    }
  }
}

/** What every CLI test file needs: dist/ checked before its tests, its folders and schemas removed after them. */
export function useCliHarness(): void {
  beforeAll(ensureBuilt)
  afterAll(async () => {
    removeTempDirs()
    await dropSchemas()
  })
}

export interface CliResult {
  status: number
  stdout: string
  stderr: string
}

export interface CliOptions {
  databaseUrl: string
  catalogDir?: string
  cwd?: string
  /** Variables added to the small environment the command gets. */
  env?: Record<string, string>
  /** Written to the command's standard input, which is then closed. */
  input?: string
}

export function environment(options: CliOptions): NodeJS.ProcessEnv {
  // A small, explicit environment: the developer's own DATABASE_URL or CATALOG_DIR must not leak in.
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATABASE_URL: options.databaseUrl,
    CATALOG_DIR: options.catalogDir ?? CATALOG_DIR,
    ...options.env,
  }
}

/** Runs the CLI; resolves with its exit status and output, whatever the status. */
export function cli(args: readonly string[], options: CliOptions): Promise<CliResult> {
  return startCli(args, options).exited
}

/** The CLI running in the background, for tests that load the server meanwhile. */
export interface RunningCli {
  /** Its exit status and output, once it has exited. */
  readonly exited: Promise<CliResult>
  /** Kills it if it is still running (for a test's `finally`). */
  stop(): void
}

/** Starts the CLI, with `nodeArgs` before its script (e.g. `--require` a probe). */
export function startCli(args: readonly string[], options: CliOptions & { nodeArgs?: readonly string[] }): RunningCli {
  const child = execFile(process.execPath, [...(options.nodeArgs ?? []), CLI, ...args], {
    cwd: options.cwd ?? ROOT,
    env: environment(options),
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  })
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (chunk: string) => (stdout += chunk))
  child.stderr!.on('data', (chunk: string) => (stderr += chunk))
  const exited = new Promise<CliResult>((resolve) =>
    child.once('close', (code) => resolve({ status: code ?? -1, stdout, stderr })),
  )
  if (options.input !== undefined) child.stdin?.end(options.input)
  return {
    exited,
    stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    },
  }
}

/** Loaded into a CLI run (`--require`), it prints the run's peak RSS and the heap kept through a full collection. */
export const PEAK_RSS = path.join(ROOT, 'test/support/report-peak-rss.cjs')

/** The CLI started with PEAK_RSS loaded; memoryOf reads the figures from its stderr. */
export function startCliMeasuringMemory(args: readonly string[], options: CliOptions): RunningCli {
  return startCli(args, { ...options, nodeArgs: ['--require', PEAK_RSS] })
}

/** The peak RSS and the heap kept through a full collection, in KiB, as PEAK_RSS printed them. */
export function memoryOf(stderr: string): { peakKiB?: number; liveKiB?: number } {
  const [, peakKiB, liveKiB] = (/peak-rss-kib=(\d+) live-heap-kib=(\d+)/.exec(stderr) ?? []).map(Number)
  return { peakKiB, liveKiB }
}

/** The one JSON document a --json run printed; fails the test if stdout holds anything else. */
// biome-ignore lint/suspicious/noExplicitAny: each test reads the fields of its own command's document
export function jsonOf(result: CliResult): any {
  const text = result.stdout.trim()
  if (text === '' || text.includes('\n'))
    throw new Error(`expected one JSON document on stdout, got:\n${result.stdout}\nstderr:\n${result.stderr}`)
  return JSON.parse(text)
}

/** Opens the same database in the test process, to arrange data or to check what the CLI wrote. */
export async function withStorage<T>(databaseUrl: string, work: (storage: Storage) => Promise<T>): Promise<T> {
  const storage = openStorage(databaseUrl, { busyTimeoutMs: 5000 })
  try {
    await migrateTestStorage(storage, databaseUrl, false)
    return await work(storage)
  } finally {
    await storage.close()
  }
}

export async function countRows(databaseUrl: string): Promise<{ students: number; links: number; progress: number }> {
  return withStorage(databaseUrl, async ({ db }) => {
    const count = (table: 'students' | 'student_organisations' | 'progress') => rowCount(db, table)
    return {
      students: await count('students'),
      links: await count('student_organisations'),
      progress: await count('progress'),
    }
  })
}
