/**
 * The machine's shared PostgreSQL and Redis, when present, and throwaway servers of our own
 * for fault tests (never stop the shared ones: other suites use them).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import net from 'node:net'

/** The shared services, as vitest.config.ts found them: '' when not reachable. */
export const REDIS_URL = process.env.TEST_REDIS_URL ?? ''
export const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? ''

export function canConnect(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port })
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(timeoutMs, () => done(false))
    socket.once('connect', () => done(true))
    socket.once('error', () => done(false))
  })
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
    server.once('error', reject)
  })
}

export function hasRedisServer(): boolean {
  return spawnSync('redis-server', ['--version']).status === 0
}

/** A redis-server of the test's own, on its own port, keeping nothing on disk. */
export class OwnRedis {
  #child: ChildProcess | undefined
  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`
  }

  async start(): Promise<void> {
    this.#child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    )
    for (let i = 0; i < 100; i++) {
      if (await canConnect('127.0.0.1', this.port)) return
      await new Promise((r) => setTimeout(r, 50))
    }
    throw new Error(`redis-server did not start on ${this.port}`)
  }

  async kill(): Promise<void> {
    const child = this.#child
    // Already gone (an exit code, or the signal that killed it): its exit event has fired.
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGKILL')
    await exited
  }
}
