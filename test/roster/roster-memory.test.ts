/**
 * A roster of 100,000 students is read within the existing importer's memory bound: what the
 * reader keeps (the students, their first names and schools) stays under the 24 MB that
 * test/scale/import-under-load.test.ts allows an import to keep through a full collection, and
 * the files themselves are never held. Figures: docs (the OneRoster reader's section).
 */
import fs from 'node:fs'
import path from 'node:path'
import v8 from 'node:v8'
import vm from 'node:vm'
import { afterAll, expect, it } from 'vitest'
import { readOneRoster } from '../../src/roster/oneroster.js'
import {
  manifest,
  ORGS_HEADER,
  ROLES_HEADER,
  removeTempDirs,
  tempDir,
  USERS_12_HEADER,
  writeLargeTable,
} from './roster-export.js'

afterAll(removeTempDirs)

const STUDENTS = 100_000
const SCHOOLS = 40
const TEACHERS = 5_000
const MiB = 1024 * 1024
const SAMPLE_MS = 100
const FIRST_NAMES = ['Ada', 'Ben', 'Cara', 'Dmitri', 'Eun-ji', 'Farah', 'Gustavo', 'Hana', "D'Andre", 'Zoë']

v8.setFlagsFromString('--expose-gc')
const gc = vm.runInNewContext('gc') as () => void

/** A 1.2 bulk export written line by line, every personal column filled as a district's would be. */
function writeExport(folder: string): number {
  const write = (name: string, header: readonly string[], rows: Iterable<Record<string, string>>) =>
    writeLargeTable(folder, name, header, rows)
  fs.writeFileSync(
    path.join(folder, 'manifest.csv'),
    manifest('1.2', { orgs: 'bulk', users: 'bulk', roles: 'bulk' }).toString(),
  )
  write('orgs.csv', ORGS_HEADER, [
    { sourcedId: 'district', name: 'District', type: 'district' },
    ...Array.from({ length: SCHOOLS }, (_, i) => ({ sourcedId: `school-${i}`, name: `School ${i}`, type: 'school' })),
  ])
  const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`
  write(
    'users.csv',
    USERS_12_HEADER,
    (function* () {
      for (let n = 0; n < STUDENTS + TEACHERS; n++) {
        const given = FIRST_NAMES[n % FIRST_NAMES.length]!
        yield {
          sourcedId: uuid(n),
          enabledUser: 'true',
          username: `user${n}`,
          userIds: `{SIS:${n}}`,
          givenName: given,
          familyName: `Family${n}`,
          middleName: 'Middle',
          identifier: String(100_000 + n),
          email: `user${n}@students.example.org`,
          phone: '555-0100',
          grades: '05',
          primaryOrgSourcedId: `school-${n % SCHOOLS}`,
        }
      }
    })(),
  )
  write(
    'roles.csv',
    ROLES_HEADER,
    (function* () {
      for (let n = 0; n < STUDENTS + TEACHERS; n++) {
        const role = n < STUDENTS ? 'student' : 'teacher'
        const base = { userSourcedId: uuid(n), role, beginDate: '2026-08-15' }
        yield { ...base, sourcedId: `r${n}`, roleType: 'primary', orgSourcedId: `school-${n % SCHOOLS}` }
        // One student in twenty also attends a second school.
        if (n % 20 === 0)
          yield { ...base, sourcedId: `r${n}b`, roleType: 'secondary', orgSourcedId: `school-${(n + 1) % SCHOOLS}` }
      }
    })(),
  )
  return fs.readdirSync(folder).reduce((sum, name) => sum + fs.statSync(path.join(folder, name)).size, 0)
}

it(`reads ${STUDENTS.toLocaleString('en-US')} students keeping under 24 MB, without holding the files`, async () => {
  const folder = tempDir()
  const bytes = writeExport(folder)
  gc()
  const before = process.memoryUsage().heapUsed
  const rssPeakBefore = process.resourceUsage().maxRSS
  // A full collection now and then while the files are read: what survives it is what the reader holds.
  // Each one walks the whole worker's heap (every module the worker loaded), so ten a second.
  let live = 0
  let samples = 0
  const sampler = setInterval(() => {
    gc()
    live = Math.max(live, process.memoryUsage().heapUsed - before)
    samples++
  }, SAMPLE_MS)
  const started = performance.now()
  let result: Awaited<ReturnType<typeof readOneRoster>>
  try {
    result = await readOneRoster(folder)
  } finally {
    clearInterval(sampler)
  }
  const seconds = (performance.now() - started) / 1000
  gc()
  const kept = process.memoryUsage().heapUsed - before
  const rss = (process.resourceUsage().maxRSS - rssPeakBefore) / 1024
  const figures =
    `${(bytes / MiB).toFixed(1)} MiB of CSV read in ${seconds.toFixed(2)} s (with a full collection every ${SAMPLE_MS} ms); ` +
    `heap held while reading at most ${(live / MiB).toFixed(1)} MiB (${samples} samples), ` +
    `kept ${(kept / MiB).toFixed(1)} MiB; peak RSS +${rss.toFixed(0)} MiB`
  console.info(`[oneroster memory] ${figures}`)

  expect(result.ok, figures).toBe(true)
  if (!result.ok) return
  expect(result.students).toHaveLength(STUDENTS)
  expect(result.skipped.nonStudentUsers).toBe(TEACHERS)
  expect(samples, figures).toBeGreaterThanOrEqual(3)
  expect(kept / MiB, figures).toBeLessThan(24)
  expect(live / MiB, figures).toBeLessThan(24)
  // What one student costs; strings still sharing memory with the text they were cut from cost half as much again.
  expect(kept / STUDENTS, figures).toBeLessThan(160)
  // A memory bound, not a time limit: on a loaded machine the read alone took 30 s.
}, 120_000)
