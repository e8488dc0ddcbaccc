/**
 * One HTTP/1.1 request written byte for byte on a socket: the request target goes out exactly
 * as given (percent-encoding, dot segments, double slashes, absolute form), which fetch and
 * inject would normalise or refuse.
 */
import net from 'node:net'

export interface RawResponse {
  status: number
  headers: Record<string, string>
  body: string
}

export function rawRequest(
  base: string,
  target: string,
  options: {
    method?: string
    headers?: Record<string, string>
    body?: string | Buffer
    pieces?: number
    pauseMs?: number
  } = {},
): Promise<RawResponse> {
  const { hostname, port } = new URL(base)
  const method = options.method ?? 'GET'
  const headers: Record<string, string> = { host: `${hostname}:${port}`, connection: 'close', ...options.headers }
  if (options.body !== undefined && headers['content-length'] === undefined)
    headers['content-length'] = String(Buffer.byteLength(options.body))
  const head = `${method} ${target} HTTP/1.1\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port) })
    const chunks: Buffer[] = []
    socket.setTimeout(10_000, () => socket.destroy(new Error(`no answer to ${method} ${target}`)))
    // write, not end: a half-closed socket may be dropped by the server before it answers.
    // With `pieces`, the request goes out in that many parts with a pause between them (a slow
    // client, or a body split across TCP segments).
    const bytes = Buffer.concat([
      Buffer.from(head, 'latin1'),
      typeof options.body === 'string' ? Buffer.from(options.body) : (options.body ?? Buffer.alloc(0)),
    ])
    socket.on('connect', async () => {
      const pieces = Math.max(1, options.pieces ?? 1)
      const size = Math.ceil(bytes.length / pieces)
      for (let at = 0; at < bytes.length && !socket.destroyed; at += size) {
        socket.write(bytes.subarray(at, at + size))
        if (at + size < bytes.length && options.pauseMs)
          await new Promise((resolve) => setTimeout(resolve, options.pauseMs))
      }
    })
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    // A reset after the answer is the server closing; no answer at all is reported on close.
    socket.on('error', () => {})
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1')
      const split = text.indexOf('\r\n\r\n')
      const [statusLine, ...lines] = text.slice(0, split).split('\r\n')
      const match = /^HTTP\/1\.1 (\d{3})/.exec(statusLine ?? '')
      if (match === null)
        return reject(new Error(`no HTTP response to ${method} ${target}: ${JSON.stringify(text.slice(0, 200))}`))
      const parsed: Record<string, string> = {}
      for (const line of lines) {
        const colon = line.indexOf(':')
        parsed[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
      }
      resolve({ status: Number(match[1]), headers: parsed, body: text.slice(split + 4) })
    })
  })
}
