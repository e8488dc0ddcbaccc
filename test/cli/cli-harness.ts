/**
 * Runs the built `curriculum` command as a real child process, the way an operator does, on a
 * fresh SQLite file per test.
 */
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { openStorage, type Storage } from '../../src/storage/connection.js'
import { migrate } from '../../src/storage/migrate.js'

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

function environment(options: CliOptions): NodeJS.ProcessEnv {
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
    await migrate(storage)
    return await work(storage)
  } finally {
    await storage.close()
  }
}

export async function countRows(databaseUrl: string): Promise<{ students: number; links: number; progress: number }> {
  return withStorage(databaseUrl, async ({ db }) => {
    const count = async (table: 'students' | 'student_organisations' | 'progress') =>
      Number(
        (
          await db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      )
    return {
      students: await count('students'),
      links: await count('student_organisations'),
      progress: await count('progress'),
    }
  })
}
