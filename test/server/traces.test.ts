/**
 * Traces: with OTEL_EXPORTER_OTLP_ENDPOINT set, the built server exports over OTLP/HTTP to a
 * receiver in this process, and one enroll is one trace holding the HTTP server span, the
 * admission span and the storage span below it, with no first name and no key in any attribute.
 * Without the variable, no module of OpenTelemetry is loaded at all. Real processes, real socket.
 */
import fs from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { openStorage } from '../../src/storage/connection.js'
import { CATALOG_DIR, freshDatabaseUrl, tempDir } from '../helper.js'
import { type RunningServer, startServer } from './process.js'

const ENGINES = [
  { engine: 'sqlite', url: () => freshDatabaseUrl('') },
  ...(process.env.TEST_POSTGRES_URL
    ? [{ engine: 'postgres', url: () => freshDatabaseUrl(process.env.TEST_POSTGRES_URL) }]
    : []),
]

/** Drops the PostgreSQL schema a server made for itself (a SQLite file goes with its folder). */
async function dropSchema(url: string): Promise<void> {
  if (!url.startsWith('postgres')) return
  const storage = openStorage(url)
  try {
    await sql`drop schema if exists ${sql.id(storage.schema!)} cascade`.execute(storage.db)
  } finally {
    await storage.close()
  }
}

interface OtlpValue {
  stringValue?: string
  intValue?: string | number
  boolValue?: boolean
  arrayValue?: { values: OtlpValue[] }
}
interface OtlpAttribute {
  key: string
  value: OtlpValue
}
interface OtlpSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  kind: number
  attributes: OtlpAttribute[]
  events?: { attributes?: OtlpAttribute[] }[]
}
interface OtlpRequest {
  resourceSpans: { resource: { attributes: OtlpAttribute[] }; scopeSpans: { spans: OtlpSpan[] }[] }[]
}

/** Records, in the process it is preloaded into, every module that process loads (require or import). */
function moduleRecorder(dir: string): { nodeOptions: string; loaded(): string[] } {
  const list = path.join(dir, 'loaded.txt')
  const preload = path.join(dir, 'record-modules.mjs')
  fs.writeFileSync(
    preload,
    [
      "import fs from 'node:fs'",
      "import module from 'node:module'",
      `const list = ${JSON.stringify(list)}`,
      'module.registerHooks({',
      '  resolve(specifier, context, next) {',
      '    const resolved = next(specifier, context)',
      "    fs.appendFileSync(list, resolved.url + '\\n')",
      '    return resolved',
      '  },',
      '})',
    ].join('\n'),
  )
  return {
    nodeOptions: `--import=${pathToFileURL(preload).href}`,
    loaded: () => (fs.existsSync(list) ? fs.readFileSync(list, 'utf8').split('\n').filter(Boolean) : []),
  }
}

/** An OTLP/HTTP (JSON) receiver: every span posted to /v1/traces, with its resource's attributes. */
async function otlpReceiver() {
  const requests: OtlpRequest[] = []
  const server = http.createServer((request, response) => {
    let body = ''
    request.setEncoding('utf8')
    request.on('data', (chunk: string) => (body += chunk))
    request.on('end', () => {
      if (request.method === 'POST' && request.url === '/v1/traces') requests.push(JSON.parse(body) as OtlpRequest)
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    spans: () => requests.flatMap((r) => r.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((s) => s.spans))),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

function strings(value: OtlpValue): string[] {
  if (value.arrayValue !== undefined) return value.arrayValue.values.flatMap(strings)
  return [String(value.stringValue ?? value.intValue ?? value.boolValue ?? '')]
}

function demoFixtures(out: string) {
  const match = /Demo student: (\w+) \((\w+)\), id ([0-9a-f-]{36})/.exec(out)!
  return {
    studentKey: /Demo student key[^\n]*\n\s+(cur_live_\w+)/.exec(out)![1]!,
    firstName: match[1]!,
    tier: match[2]!,
    studentId: match[3]!,
  }
}

async function enroll(server: RunningServer, fixtures: ReturnType<typeof demoFixtures>): Promise<number> {
  const tier = fixtures.tier === 'builder' ? 'explorer' : 'builder'
  const response = await fetch(`${server.baseUrl}/api/v1/students/${fixtures.studentId}/enroll`, {
    method: 'POST',
    headers: { authorization: `Bearer ${fixtures.studentKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tier }),
  })
  await response.arrayBuffer()
  return response.status
}

async function until<T>(limitMs: number, look: () => T | undefined): Promise<T> {
  const started = Date.now()
  for (;;) {
    const found = look()
    if (found !== undefined) return found
    if (Date.now() - started > limitMs) throw new Error(`not seen within ${limitMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe('traces', () => {
  it('loads no module of OpenTelemetry when OTEL_EXPORTER_OTLP_ENDPOINT is not set', async () => {
    const dir = tempDir()
    const recorder = moduleRecorder(dir)
    const server = await startServer({
      DATABASE_URL: `sqlite:${path.join(dir, 'untraced.db')}`,
      CATALOG_DIR,
      OTEL_EXPORTER_OTLP_ENDPOINT: '',
      NODE_OPTIONS: recorder.nodeOptions,
    })
    try {
      expect(await enroll(server, demoFixtures(server.output()))).toBe(200)
      expect(server.output()).toContain('fast path on')
    } finally {
      await server.stop()
    }
    const loaded = recorder.loaded()
    // The recorder saw the server's own modules, so an OpenTelemetry one would have been seen too.
    expect(loaded.some((url) => url.endsWith('/dist/server-bundle.cjs'))).toBe(true)
    expect(loaded.filter((url) => url.includes('@opentelemetry'))).toEqual([])
  }, 60_000)

  it.each(ENGINES)(
    'exports one trace per enroll, with its storage span, and no first name or key in any attribute ($engine)',
    async ({ engine, url }) => {
      const dir = tempDir()
      const recorder = moduleRecorder(dir)
      const receiver = await otlpReceiver()
      const databaseUrl = url()
      let server: RunningServer | undefined
      try {
        server = await startServer({
          DATABASE_URL: databaseUrl,
          CATALOG_DIR,
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
          OTEL_BSP_SCHEDULE_DELAY: '100',
          NODE_OPTIONS: recorder.nodeOptions,
        })
        expect(server.output()).toContain('traces on')
        expect(server.output()).toContain('fast path off: OTEL_EXPORTER_OTLP_ENDPOINT is set')
        const fixtures = demoFixtures(server.output())
        expect(await enroll(server, fixtures)).toBe(200)

        const enrollSpan = await until(15_000, () =>
          receiver
            .spans()
            .find((span) =>
              span.attributes.some((a) =>
                strings(a.value).some((s) => s.endsWith(`/students/${fixtures.studentId}/enroll`)),
              ),
            ),
        )
        const trace = await until(15_000, () => {
          const spans = receiver.spans().filter((span) => span.traceId === enrollSpan.traceId)
          return spans.some((span) => span.name.startsWith('storage.')) ? spans : undefined
        })
        const server_ = trace.find((span) => span.kind === 2 && span.parentSpanId === undefined)
        expect(server_?.spanId).toBe(enrollSpan.spanId)
        const byId = new Map(trace.map((span) => [span.spanId, span]))
        const isBelow = (span: OtlpSpan, ancestor: OtlpSpan): boolean => {
          const parent = span.parentSpanId ? byId.get(span.parentSpanId) : undefined
          return parent !== undefined && (parent === ancestor || isBelow(parent, ancestor))
        }
        const storage = trace.filter((span) => span.name.startsWith('storage.'))
        expect(storage.some((span) => isBelow(span, server_!))).toBe(true)
        expect(trace.some((span) => span.name === 'admission' && isBelow(span, server_!))).toBe(true)
        // PostgreSQL's own client spans (the pg instrumentation) below the storage span.
        if (engine === 'postgres')
          expect(trace.some((span) => span.name.startsWith('pg.') && storage.some((s) => isBelow(span, s)))).toBe(true)

        // Every attribute of every span and resource exported, this trace's and any other's.
        const everything = receiver.requests.flatMap((request) =>
          request.resourceSpans.flatMap((rs) => [
            ...rs.resource.attributes,
            ...rs.scopeSpans.flatMap((s) =>
              s.spans.flatMap((span) => [
                ...span.attributes,
                ...(span.events ?? []).flatMap((e) => e.attributes ?? []),
              ]),
            ),
          ]),
        )
        const values = everything.flatMap((attribute) => [attribute.key, ...strings(attribute.value)])
        expect(values.length).toBeGreaterThan(10)
        // As a word: a short name may be part of an unrelated value (a host name, a path).
        const name = new RegExp(`\\b${fixtures.firstName}\\b`)
        expect(values.filter((value) => name.test(value))).toEqual([])
        expect(values.filter((value) => value.includes(fixtures.studentKey) || /cur_(live|test)_/.test(value))).toEqual(
          [],
        )
        expect(values.filter((value) => /authorization/i.test(value))).toEqual([])
      } finally {
        await server?.stop()
        await receiver.close()
        await dropSchema(databaseUrl)
      }
      expect(recorder.loaded().some((url) => url.includes('@opentelemetry/sdk-node'))).toBe(true)
    },
    60_000,
  )
})
