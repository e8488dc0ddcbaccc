/**
 * The fast path writes a progress body straight from the rows (progress-body.ts); it must be
 * byte for byte what the route's serializer writes for `progressView` of the same rows, and it
 * must step aside (undefined) for rows it cannot write as they are. The rows' `plain` flag is
 * checked on real SQLite, as the synchronous read sets it.
 */
import fastJson from 'fast-json-stringify'
import { beforeAll, describe, expect, it } from 'vitest'
import { type CatalogIndex, progressView } from '../../src/domain/progress.js'
import type { TierId } from '../../src/domain/tiers.js'
import { progressBody, progressRenderer } from '../../src/http/fast/progress-body.js'
import { ProgressEntrySchema, StudentProgressSchema } from '../../src/http/schemas/students.js'
import { upsertProgress } from '../../src/storage/student-import-repository.js'
import { readStudentRows } from '../../src/cases/progress-read.js'
import { type ProgressTuple, progressOfRows, type StudentRows } from '../../src/storage/student-repository.js'
import { createTestStorage, type Fixtures, seedFixtures, START, STUDENTS } from '../helper.js'
import { perSuite } from '../support/built.js'

const serialize = fastJson(StudentProgressSchema, { schema: { ProgressEntry: ProgressEntrySchema } })
const ID = '0b7c6a52-8c1e-4f4e-9a57-3d0c8f1e2a11'

const positions = new Map([
  ['explorer/one', 0],
  ['explorer/two', 1],
  ['builder/one', 2],
  ['innovator/one', 3],
])
const catalog: CatalogIndex = {
  position: (slug) => positions.get(slug),
  lessonCount: (tier) => ({ explorer: 2, builder: 1, innovator: 1 })[tier],
}

/** The bytes the route's serializer writes for these rows, as the latin1 string progressBody returns. */
function serializerBytes(student: StudentRows): string {
  const text = serialize(progressView(progressOfRows(ID, student), catalog))
  return Buffer.from(text, 'utf8').toString('latin1')
}

const at = (day: number) => `2026-03-${String(day).padStart(2, '0')}T10:00:00.000Z`
const ROWS: ProgressTuple[] = [
  // Stored in slug order, as SQLite reads them; none of it in catalog order.
  ['builder/one', 'completed', 40, 300, at(1), at(2)],
  ['explorer/gone', 'completed', 5, 10, at(1), at(3)],
  ['explorer/one', 'completed', 100, 900, at(3), at(4)],
  ['explorer/two', 'in_progress', 20, 60, at(5), null],
  ['aaa/also-gone', 'in_progress', 0, 0, at(6), null],
  ['innovator/one', 'completed', 0, 0, at(7), at(7)],
]

function rows(overrides: Partial<StudentRows> = {}): StudentRows {
  return {
    firstName: 'Ada',
    tier: 'explorer',
    rows: ROWS.map((row) => [...row] as ProgressTuple),
    plain: true,
    ...overrides,
  }
}

describe('a progress body written from the rows', () => {
  it('is the serializer’s, entries in catalog order (lessons gone from it last, by slug) and summary', () => {
    for (const tier of ['explorer', 'builder', 'innovator'] as TierId[]) {
      const student = rows({ tier })
      const body = progressBody(ID, rows({ tier }), catalog)
      expect(body).toBe(serializerBytes(student))
    }
    const parsed = JSON.parse(progressBody(ID, rows(), catalog)!) as { progress: { lessonSlug: string }[] }
    expect(parsed.progress.map((entry) => entry.lessonSlug)).toEqual([
      'explorer/one',
      'explorer/two',
      'builder/one',
      'innovator/one',
      'aaa/also-gone',
      'explorer/gone',
    ])
  })

  it('is the serializer’s for a student with no rows, and with one', () => {
    for (const list of [[], [ROWS[2]!]]) {
      const student = rows({ rows: list.map((row) => [...row] as ProgressTuple) })
      expect(progressBody(ID, student, catalog)).toBe(serializerBytes(student))
    }
  })

  it('writes any first name as JSON does, in UTF-8 bytes', () => {
    const names = [
      'Zoë',
      'Łucja',
      '美咲',
      'Ana 😀',
      'say "hi"',
      'back\\slash',
      'tab\there',
      '\u0001\u001f\u007f',
      'lone \ud800 surrogate',
      'x'.repeat(41),
      'é'.repeat(42),
      'y'.repeat(200),
    ]
    for (const firstName of names) {
      const student = rows({ firstName })
      const body = progressBody(ID, student, catalog)
      expect(body).toBe(serializerBytes(student))
      // A lone surrogate goes out escaped (\ud800 in the text) and so comes back as it was.
      const sent = JSON.parse(Buffer.from(body!, 'latin1').toString('utf8')) as { displayName: string }
      expect(sent.displayName).toBe(firstName)
    }
  })

  it('steps aside for rows that are not plain, and for numbers that are not whole', () => {
    expect(progressBody(ID, rows({ plain: false }), catalog)).toBeUndefined()
    const fractional = rows()
    fractional.rows[0]![2] = 1.5
    expect(progressBody(ID, fractional, catalog)).toBeUndefined()
    const huge = rows()
    huge.rows[1]![3] = 2 ** 60
    expect(progressBody(ID, huge, catalog)).toBeUndefined()
  })

  it('is, with the serializer where it steps aside, the one renderer of the fast path', () => {
    const render = progressRenderer()
    const fractional = rows()
    fractional.rows[0]![2] = 1.5
    for (const student of [rows(), rows({ plain: false }), fractional, rows({ firstName: 'Zoë' })])
      expect(render(ID, student, catalog)).toBe(serializerBytes(student))
  })
})

describe('rows as read from SQLite', () => {
  const storage = perSuite(() => createTestStorage())
  let fixtures: Fixtures

  beforeAll(async () => {
    fixtures = await seedFixtures(storage, START)
  })

  async function read(lessonSlug: string): Promise<StudentRows | undefined> {
    await upsertProgress(
      storage.db,
      [
        {
          studentId: STUDENTS.dev,
          lessonSlug,
          status: 'in_progress',
          xp: 1,
          timeSeconds: 2,
          startedAt: at(1),
          completedAt: null,
        },
      ],
      START,
    )
    const context = {
      at: START,
      requestId: 'test',
      keyId: fixtures.keyIds.read,
      organisationId: fixtures.orgs.acme,
      sandbox: false,
    }
    return readStudentRows(storage.db, storage.writes, STUDENTS.dev, context, storage.reader)
  }

  it.runIf(process.env.TEST_DATABASE_URL === undefined)(
    'are plain only when every string is printable ASCII with nothing to escape',
    async () => {
      expect((await read('explorer/plain-slug'))?.plain).toBe(true)
      for (const slug of ['explorer/say-"hi"', 'explorer/back\\slash', 'explorer/café', 'explorer/tab\t']) {
        const student = (await read(slug))!
        expect(student.plain).toBe(false)
        expect(student.rows.map((row) => row[0])).toContain(slug)
        // The serializer writes the body then, and it carries the slug intact.
        expect(progressBody(STUDENTS.dev, student, catalog)).toBeUndefined()
      }
    },
  )
})
