/**
 * A district's first OneRoster import, then the same export again, while clients read a
 * student's progress through the API (each read writes its disclosure row, so on SQLite it needs
 * the write lock an import's transaction holds). Prints the time of each phase and the reads'
 * latency before and during it, as one JSON document.
 *
 *   node bench/roster-import-under-load.mjs [students=100000] [via=dashboard|cli] [clients=8] [root=.]
 *
 * `via=dashboard` uploads the export as a .zip through the operator dashboard and confirms it,
 * so the import runs inside the server process; `via=cli` runs `curriculum roster import` beside
 * it. `root` is a checkout with a built dist/. With BENCH_DATABASE_URL=postgres://...?schema=<new
 * schema> it runs on PostgreSQL instead (the schema is dropped at the end).
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { partnerWithKey, startUnlimitedServer } from './lib/under-load.mjs'
import { writeRosterExport } from './lib/oneroster-export.mjs'

const students = Number(process.argv[2] ?? 100_000)
const via = process.argv[3] ?? 'dashboard'
const clients = Number(process.argv[4] ?? 8)
const root = path.resolve(process.argv[5] ?? '.')
const dist = (file) => import(path.join(root, 'dist', file))
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'roster-import-'))
const url = process.env.BENCH_DATABASE_URL ?? `sqlite:${path.join(dir, 'db.sqlite')}`
const READ = '11111111-1111-4111-8111-111111111111'
const OPERATOR = { email: 'bench-operator@example.org', password: 'a bench operator passphrase' }

const started = performance.now()
const csvBytes = writeRosterExport(path.join(dir, 'export'), path.join(dir, 'export.zip'), { students })
const exportSeconds = (performance.now() - started) / 1000

const { openStorage } = await dist('storage/connection.js')
const { migrate } = await dist('storage/migrate.js')
const { upsertStudents, linkStudents } = await dist('storage/student-import-repository.js')
const { createAccount } = await dist('storage/account-repository.js')
const { hashPassword } = await dist('domain/passwords.js')

const storage = openStorage(url)
await migrate(storage)
const now = Date.now()
const { organisation: partner, key } = await partnerWithKey(root, storage.db, {
  name: 'Partner',
  scopes: ['students:read'],
  now,
})
await upsertStudents(storage.db, [{ id: READ, firstName: 'Ada', tier: 'explorer' }], now)
await linkStudents(storage.db, [{ studentId: READ, organisationId: partner.id }], now)
await createAccount(
  storage.db,
  { email: OPERATOR.email, passwordHash: await hashPassword(OPERATOR.password), role: 'operator' },
  now,
)
await storage.close()

const server = await startUnlimitedServer(root, url, {
  LOG_LEVEL: 'info',
  ROSTER_UPLOAD_DIR: path.join(dir, 'uploads'),
})
const base = server.baseUrl

/** A signed-in operator's cookies and the CSRF token of its forms. */
async function signIn() {
  const cookies = new Map()
  const keep = (res) => {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const at = pair.indexOf('=')
      cookies.set(pair.slice(0, at), pair.slice(at + 1))
    }
  }
  const header = () => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ')
  const tokenOf = async (res) => /name="_csrf" value="([^"]+)"/.exec(await res.text())[1]
  const login = await fetch(`${base}/dashboard/login`)
  keep(login)
  const form = new URLSearchParams({ _csrf: await tokenOf(login), email: OPERATOR.email, password: OPERATOR.password })
  const signedIn = await fetch(`${base}/dashboard/login`, {
    method: 'POST',
    headers: { cookie: header(), 'content-type': 'application/x-www-form-urlencoded' },
    body: form,
    redirect: 'manual',
  })
  keep(signedIn)
  const page = await fetch(`${base}/dashboard/operator/roster`, { headers: { cookie: header() } })
  return { cookie: header(), csrf: await tokenOf(page) }
}

/** Uploads and confirms through the dashboard; the seconds of each step. */
async function viaDashboard(session) {
  const t0 = performance.now()
  const form = new FormData()
  form.append('_csrf', session.csrf)
  form.append('tier', 'explorer')
  form.append('export', new Blob([fs.readFileSync(path.join(dir, 'export.zip'))]), 'export.zip')
  const uploaded = await fetch(`${base}/dashboard/operator/roster`, {
    method: 'POST',
    headers: { cookie: session.cookie },
    body: form,
    redirect: 'manual',
  })
  if (uploaded.status !== 303) throw new Error(`upload answered ${uploaded.status}: ${await uploaded.text()}`)
  const t1 = performance.now()
  const confirmed = await fetch(`${base}${uploaded.headers.get('location')}/confirm`, {
    method: 'POST',
    headers: { cookie: session.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: session.csrf }),
    redirect: 'manual',
  })
  if (confirmed.status !== 303) throw new Error(`confirm answered ${confirmed.status}: ${await confirmed.text()}`)
  return { previewSeconds: (t1 - t0) / 1000, applySeconds: (performance.now() - t1) / 1000 }
}

async function viaCli() {
  const t0 = performance.now()
  const child = spawn(
    process.execPath,
    [path.join(root, 'dist/cli/index.js'), 'roster', 'import', path.join(dir, 'export'), '--json'],
    { env: { PATH: process.env.PATH, DATABASE_URL: url }, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  let out = ''
  child.stdout.on('data', (c) => (out += c))
  child.stderr.on('data', (c) => (out += c))
  const code = await new Promise((resolve) => child.on('exit', resolve))
  if (code !== 0) throw new Error(out)
  return { seconds: (performance.now() - t0) / 1000 }
}

const headers = { authorization: `Bearer ${key}` }
let latencies = []
let statuses = {}
let running = true
async function client() {
  while (running) {
    const t0 = performance.now()
    const res = await fetch(`${base}/api/v1/students/${READ}/progress`, { headers })
    await res.arrayBuffer()
    latencies.push(performance.now() - t0)
    statuses[res.status] = (statuses[res.status] ?? 0) + 1
  }
}
const pct = (list, p) => {
  const sorted = [...list].sort((a, b) => a - b)
  return Number(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]?.toFixed(1))
}
const reads = () => {
  const summary = {
    n: latencies.length,
    statuses,
    p50: pct(latencies, 0.5),
    p99: pct(latencies, 0.99),
    max: pct(latencies, 1),
  }
  latencies = []
  statuses = {}
  return summary
}

try {
  const session = via === 'dashboard' ? await signIn() : undefined
  const readers = Array.from({ length: clients }, () => client())
  await new Promise((r) => setTimeout(r, 3000))
  const alone = reads()
  const first = via === 'dashboard' ? await viaDashboard(session) : await viaCli()
  const duringFirst = reads()
  const again = via === 'dashboard' ? await viaDashboard(session) : await viaCli()
  const duringAgain = reads()
  running = false
  await Promise.all(readers)
  console.log(
    JSON.stringify({
      engine: url.startsWith('postgres') ? 'postgres' : 'sqlite',
      via,
      students,
      csvMiB: Number((csvBytes / 1024 / 1024).toFixed(1)),
      zipMiB: Number((fs.statSync(path.join(dir, 'export.zip')).size / 1024 / 1024).toFixed(1)),
      exportWrittenSeconds: Number(exportSeconds.toFixed(1)),
      clients,
      readsAlone: alone,
      firstImport: { ...first, reads: duringFirst },
      sameExportAgain: { ...again, reads: duringAgain },
    }),
  )
} finally {
  running = false
  await server.stop()
  fs.rmSync(dir, { recursive: true, force: true })
  const schema = new URL(url).searchParams.get('schema')
  if (url.startsWith('postgres') && schema !== null) {
    const { sql } = await import('kysely')
    const cleanup = openStorage(url)
    await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(cleanup.db)
    await cleanup.close()
  }
}
