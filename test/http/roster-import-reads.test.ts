/**
 * A roster import running inside the server process, as the dashboard's confirm runs it (in
 * batches on SQLite, in one transaction on PostgreSQL), while
 * clients read a student's progress over real sockets (each read writes its disclosure row): every
 * read succeeds, through a district's first import and the same export again, and reads keep
 * being answered all through the first (one transaction on SQLite would hold them all until its
 * end). The latency promise (p99 within 100 ms) is a figure of bench/roster-import-under-load.mjs,
 * 100,000 students on a machine doing nothing else: the suite shares its cores with another test
 * file, and timing it here only measured that.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readOneRoster, type OneRosterExport } from '../../src/roster/oneroster.js'
import { applyRosterImport } from '../../src/cases/roster-import/import.js'
import { bearer, buildTestApp, STUDENTS, type TestContext } from '../helper.js'
import {
  manifest,
  ORGS_HEADER,
  ROLES_HEADER,
  removeTempDirs,
  tempDir,
  USERS_12_HEADER,
} from '../roster/roster-export.js'
import { waitFor } from '../support/wait-for.js'

const STUDENT_COUNT = 3000
const SCHOOLS = 12
const CLIENTS = 8
/**
 * How many reads are answered alone first, so that they are under way when the import starts
 * (counted, not timed: a loaded machine makes them slow, not absent), and as the figures' baseline.
 */
const ALONE_READS = 200

/** A 1.2 bulk export of STUDENT_COUNT students, with the personal columns a district's has. */
function writeExport(): string {
  const folder = tempDir()
  const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`
  const lines = (header: readonly string[], rows: Record<string, string>[]) =>
    `${[header.join(','), ...rows.map((row) => header.map((column) => row[column] ?? '').join(','))].join('\r\n')}\r\n`
  const students = Array.from({ length: STUDENT_COUNT }, (_, n) => n)
  fs.writeFileSync(path.join(folder, 'manifest.csv'), manifest('1.2', { orgs: 'bulk', users: 'bulk', roles: 'bulk' }))
  fs.writeFileSync(
    path.join(folder, 'orgs.csv'),
    lines(
      ORGS_HEADER,
      Array.from({ length: SCHOOLS }, (_, i) => ({ sourcedId: `school-${i}`, name: `School ${i}`, type: 'school' })),
    ),
  )
  fs.writeFileSync(
    path.join(folder, 'users.csv'),
    lines(
      USERS_12_HEADER,
      students.map((n) => ({ sourcedId: uuid(n), givenName: 'Sam', familyName: `Family${n}`, email: `u${n}@x.org` })),
    ),
  )
  fs.writeFileSync(
    path.join(folder, 'roles.csv'),
    lines(
      ROLES_HEADER,
      students.map((n) => ({
        sourcedId: `r${n}`,
        userSourcedId: uuid(n),
        role: 'student',
        roleType: 'primary',
        orgSourcedId: `school-${n % SCHOOLS}`,
      })),
    ),
  )
  return folder
}

describe('roster import while the API is read', () => {
  let t: TestContext
  let roster: OneRosterExport

  beforeAll(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT: '1000000', ORGANISATION_RATE_LIMIT: '10000000' } })
    const read = await readOneRoster(writeExport())
    if (!read.ok) throw new Error(JSON.stringify(read.problems))
    roster = read
  })
  afterAll(async () => {
    await t?.close()
    removeTempDirs()
  })

  it(`answers every progress read, all through, while ${STUDENT_COUNT.toLocaleString('en-US')} students are imported`, async () => {
    const latencies: number[] = []
    const answeredAt: number[] = []
    const statuses: number[] = []
    let running = true
    const client = async () => {
      while (running) {
        const started = performance.now()
        const res = await t.send({
          url: `/api/v1/students/${STUDENTS.ada}/progress`,
          headers: bearer(t.fixtures.keys.read),
        })
        const answered = performance.now()
        latencies.push(answered - started)
        answeredAt.push(answered)
        statuses.push(res.statusCode)
      }
    }
    const clients = Array.from({ length: CLIENTS }, () => client())
    // As the dashboard's confirm imports: batch by batch on SQLite, in one transaction on PostgreSQL.
    const sqlite = t.storage.engine === 'sqlite'
    const pause = sqlite ? () => new Promise<void>((resolve) => setImmediate(resolve)) : undefined
    const commit = sqlite ? ('batches' as const) : ('one-transaction' as const)
    let during: number[] = []
    let alone: number[] = []
    const imported: number[] = []
    const seconds: string[] = []
    const spans: { from: number; to: number }[] = []
    try {
      await waitFor(() => latencies.length >= ALONE_READS, { what: `${ALONE_READS} reads answered` })
      alone = latencies.splice(0)
      for (let round = 0; round < 2; round++) {
        const began = performance.now()
        const outcome = await applyRosterImport(t.storage.db, roster, {
          now: t.clock.now(),
          commit,
          ...(pause ? { pause } : {}),
        })
        imported.push(outcome.students.new)
        spans.push({ from: began, to: performance.now() })
        seconds.push(((spans.at(-1)!.to - began) / 1000).toFixed(2))
      }
      during = latencies.splice(0)
    } finally {
      running = false
      await Promise.all(clients)
    }
    expect(imported).toEqual([STUDENT_COUNT, 0])
    expect(statuses.filter((status) => status !== 200)).toEqual([])
    expect(during.length).toBeGreaterThan(50)
    // The first import writes every student: the longest stretch in it without a read answered.
    const first = spans[0]!
    const edges = [first.from, ...answeredAt.filter((at) => at > first.from && at < first.to), first.to]
    const longestQuiet = Math.max(...edges.slice(1).map((at, i) => at - edges[i]!))
    const p99 = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length * 0.99)]!
    const figures =
      `${t.storage.engine}: imports ${seconds.join(' s and ')} s; ${edges.length - 2} reads answered during the first, ` +
      `longest stretch without one ${longestQuiet.toFixed(0)} ms; p99 of ${during.length} reads during ` +
      `${p99(during).toFixed(1)} ms (max ${Math.max(...during).toFixed(1)}); before: ${alone.length} reads, p99 ` +
      `${p99(alone).toFixed(1)} ms`
    console.info(`[roster import reads] ${figures}`)
    expect(longestQuiet, figures).toBeLessThan((first.to - first.from) / 2)
  }, 60_000)
})
