/**
 * Starts the built server as a real child process and reads what it prints.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import path from 'node:path'

export const ROOT = path.resolve(import.meta.dirname, '../..')

export interface RunningServer {
  child: ChildProcess
  baseUrl: string
  output(): string
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

export async function startServer(env: Record<string, string>, timeoutMs = 20_000): Promise<RunningServer> {
  const child = spawn(process.execPath, [path.join(ROOT, 'dist/server.js')], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()))
  child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()))
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
  return {
    child,
    baseUrl,
    output: () => out,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null) return child.exitCode
      child.kill(signal)
      return exited
    },
  }
}
