/**
 * A TCP proxy the test can cut: the service talks to PostgreSQL through it, and the test
 * makes the database vanish (connections reset, new ones refused), hang (bytes stop flowing),
 * or come back, without touching the shared PostgreSQL server.
 */
import net from 'node:net'

export class TcpProxy {
  readonly #target: { host: string; port: number }
  #server: net.Server | undefined
  #sockets = new Set<net.Socket>()
  #hanging = false
  port = 0

  constructor(target: { host: string; port: number }) {
    this.#target = target
  }

  async start(port = 0): Promise<void> {
    this.#hanging = false
    this.#server = net.createServer((client) => {
      const upstream = net.connect(this.#target)
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket)
        socket.on('close', () => this.#sockets.delete(socket))
        socket.on('error', () => {
          client.destroy()
          upstream.destroy()
        })
      }
      client.on('data', (chunk) => {
        if (!this.#hanging) upstream.write(chunk)
      })
      upstream.on('data', (chunk) => {
        if (!this.#hanging) client.write(chunk)
      })
    })
    await new Promise<void>((resolve) => this.#server!.listen(port, '127.0.0.1', resolve))
    this.port = (this.#server.address() as net.AddressInfo).port
  }

  /** The database vanishes: open connections reset, new ones refused. */
  async cut(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy()
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()))
    this.#server = undefined
  }

  /** The database stops answering: connections stay open, nothing comes back. */
  hang(): void {
    this.#hanging = true
  }

  /** The database is back, on the same port. */
  async restore(): Promise<void> {
    if (this.#server !== undefined) {
      this.#hanging = false
      return
    }
    await this.start(this.port)
  }
}
