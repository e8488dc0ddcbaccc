/**
 * Starts the built server as a real child process and reads what it prints.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'

export const ROOT = path.resolve(import.meta.dirname, '../..')

export interface RunningServer {
  child: ChildProcess
  baseUrl: string
  output(): string
  /** Resolves once the output satisfies `test` (checked as each chunk arrives); rejects after `timeoutMs`. */
  waitForOutput(test: (output: string) => boolean, timeoutMs?: number): Promise<string>
  /** Sends `signal`; rejects with the output if the server has not exited within `limitMs`, and kills it. */
  stop(signal?: NodeJS.Signals, limitMs?: number): Promise<number | null>
  /** Kills the server and every process it started (its workers), whatever state it is in. */
  killAll(): void
}

export async function startServer(
  env: Record<string, string>,
  timeoutMs = 20_000,
  script = path.join(ROOT, 'dist/server.js'),
  /**
   * A file for the server's stderr instead of the output: Node's native debug lines are written
   * to a non-blocking pipe without retrying, and lost once the pipe is full; a file loses none.
   */
  stderrFile?: string,
  /** Another user to run as, and a Node binary that user can run (this one may be in root's home). */
  runAs?: { uid: number; gid: number; node: string },
): Promise<RunningServer> {
  const stderr = stderrFile === undefined ? 'pipe' : fs.openSync(stderrFile, 'w')
  const child = spawn(runAs?.node ?? process.execPath, [script], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', stderr],
    ...(runAs === undefined ? {} : { uid: runAs.uid, gid: runAs.gid }),
    // A process group of its own, so that killAll reaches the workers a primary forked.
    detached: true,
  })
  if (typeof stderr === 'number') fs.closeSync(stderr)
  let out = ''
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()))
  child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      // Not left running behind a failed test.
      child.kill('SIGKILL')
      reject(new Error(`server did not start:\n${out}`))
    }, timeoutMs)
    const look = () => {
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out)
      if (match) {
        clearTimeout(timer)
        resolve(match[1]!)
      }
    }
    child.stdout!.on('data', look)
    child.on('exit', () => reject(new Error(`server exited:\n${out}`)))
  })
  /** Whether the process still runs, for messages. */
  const state = () =>
    child.exitCode !== null || child.signalCode !== null
      ? `exited: ${child.exitCode ?? child.signalCode}`
      : 'still running'
  const killAll = () => {
    try {
      process.kill(-child.pid!, 'SIGKILL')
    } catch {
      // Already gone.
    }
  }
  return {
    child,
    baseUrl,
    output: () => out,
    killAll,
    waitForOutput(test, limitMs = 60_000) {
      return new Promise<string>((resolve, reject) => {
        const check = () => {
          if (!test(out)) return false
          clearTimeout(timer)
          child.stdout!.off('data', check)
          child.stderr?.off('data', check)
          resolve(out)
          return true
        }
        const timer = setTimeout(() => {
          child.stdout!.off('data', check)
          child.stderr?.off('data', check)
          reject(new Error(`the expected output did not come within ${limitMs} ms (${state()}):\n${out}`))
        }, limitMs)
        if (check()) return
        child.stdout!.on('data', check)
        child.stderr?.on('data', check)
      })
    },
    async stop(signal = 'SIGTERM', limitMs = 15_000) {
      if (child.exitCode !== null) return child.exitCode
      child.kill(signal)
      let timer: NodeJS.Timeout | undefined
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          killAll()
          reject(new Error(`the server did not exit within ${limitMs} ms of ${signal}:\n${out}`))
        }, limitMs)
      })
      try {
        return await Promise.race([exited, late])
      } finally {
        clearTimeout(timer)
      }
    },
  }
}

/** The server on `databaseUrl` with no demo data and rate limits that no load test reaches. */
export function startServerForLoad(databaseUrl: string): Promise<RunningServer> {
  return startServer({
    DATABASE_URL: databaseUrl,
    SEED_DEMO: 'false',
    RATE_LIMIT: '1000000',
    ORGANISATION_RATE_LIMIT: '1000000',
  })
}
