/**
 * A large student import against a running server: the import's peak memory, how long it
 * took, and what concurrent student requests (progress reads and enrolls, each writing a
 * disclosure row) got while it ran.
 *
 *   node bench/import-under-load.mjs [rows=1000000] [root=.]
 *
 * `root` is a checkout with a built dist/, so that two builds can be compared.
 */
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { partnerWithKey, startUnlimitedServer } from './lib/under-load.mjs'

const rows = Number(process.argv[2] ?? 1_000_000)
const root = path.resolve(process.argv[3] ?? '.')
const dist = (file) => import(path.join(root, 'dist', file))
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'import-under-load-'))
const url = `sqlite:${path.join(dir, 'db.sqlite')}`
const STUDENT = '11111111-1111-4111-8111-111111111111'

const { openStorage } = await dist('storage/connection.js')
const { migrate } = await dist('storage/migrate.js')
const { upsertStudents, linkStudents } = await dist('storage/student-import-repository.js')
const storage = openStorage(url)
await migrate(storage)
const now = Date.now()
const { organisation: org, key } = await partnerWithKey(root, storage.db, {
  name: 'Acme',
  scopes: ['students:read', 'students:write'],
  now,
})
await upsertStudents(storage.db, [{ id: STUDENT, firstName: 'Ada', tier: 'explorer' }], now)
await linkStudents(storage.db, [{ studentId: STUDENT, organisationId: org.id }], now)
await storage.close()

const file = path.join(dir, 'students.csv')
const out = fs.createWriteStream(file)
out.write('id,firstName,tier\n')
const tiers = ['explorer', 'builder', 'innovator']
for (let i = 0; i < rows; i++)
  if (!out.write(`${randomUUID()},Sam,${tiers[i % 3]}\n`)) await new Promise((r) => out.once('drain', r))
await new Promise((r) => out.end(r))

const server = await startUnlimitedServer(root, url)
const base = server.baseUrl

try {
  const started = performance.now()
  const importer = spawn(
    '/usr/bin/time',
    ['-f', '%M', process.execPath, path.join(root, 'dist/cli/index.js'), 'students', 'import', file, '--json'],
    {
      env: { PATH: process.env.PATH, DATABASE_URL: url },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  let stdout = ''
  let stderr = ''
  importer.stdout.on('data', (c) => (stdout += c))
  importer.stderr.on('data', (c) => (stderr += c))
  const done = new Promise((resolve) => importer.on('exit', resolve))
  let running = true
  void done.then(() => (running = false))

  const statuses = {}
  const latencies = []
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  async function client(i) {
    while (running) {
      const t0 = performance.now()
      const res = await fetch(
        i % 2 === 0 ? `${base}/api/v1/students/${STUDENT}/progress` : `${base}/api/v1/students/${STUDENT}/enroll`,
        i % 2 === 0
          ? { headers }
          : { method: 'POST', headers, body: JSON.stringify({ tier: tiers[latencies.length % 3] }) },
      )
      await res.arrayBuffer()
      latencies.push(performance.now() - t0)
      statuses[res.status] = (statuses[res.status] ?? 0) + 1
    }
  }
  await Promise.all(Array.from({ length: 8 }, (_, i) => client(i)))
  const code = await done
  const seconds = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]?.toFixed(1)
  const peakKiB = Number(stderr.trim().split('\n').at(-1))
  console.log(
    JSON.stringify({
      rows,
      exit: code,
      importSeconds: Number(seconds.toFixed(1)),
      peakRssMB: Math.round(peakKiB / 1024),
      requests: statuses,
      latencyMs: { p50: pct(0.5), p99: pct(0.99), max: pct(1) },
      summary: stdout.trim().slice(0, 200),
    }),
  )
} finally {
  await server.stop()
  fs.rmSync(dir, { recursive: true, force: true })
}
