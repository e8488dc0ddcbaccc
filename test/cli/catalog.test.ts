import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { readCatalog } from '../../src/storage/catalog-repository.js'
import { CATALOG_DIR, cli, jsonOf, newDatabaseUrl, tempDir, useCliHarness, withStorage } from './cli-harness.js'

interface ExpectedProblem {
  file: string
  line: number
  message: RegExp
}

/** Line (from 1) of the first line of `file` that contains `text`. */
function lineOf(file: string, text: string): number {
  const index = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .findIndex((line) => line.includes(text))
  if (index === -1) throw new Error(`"${text}" not in ${file}`)
  return index + 1
}

function replaceLine(file: string, line: number, text: string): void {
  const lines = fs.readFileSync(file, 'utf8').split('\n')
  lines[line - 1] = text
  fs.writeFileSync(file, lines.join('\n'))
}

/** A copy of the sample catalog with six different mistakes, and where each must be reported. */
function brokenCatalog(): { dir: string; expected: ExpectedProblem[] } {
  const dir = path.join(tempDir(), 'catalog')
  fs.cpSync(CATALOG_DIR, dir, { recursive: true })
  const expected: ExpectedProblem[] = []

  fs.renameSync(path.join(dir, 'explorer/e3-patterns-all-around.yaml'), path.join(dir, 'explorer/E3_Patterns.yaml'))
  expected.push({ file: 'explorer/E3_Patterns.yaml', line: 1, message: /lesson file names have the form/ })

  // A second e5 in the same tier: the file sorted second is the one reported.
  fs.copyFileSync(path.join(dir, 'explorer/e5-bug-hunters.yaml'), path.join(dir, 'explorer/e5-another-bug-hunt.yaml'))
  expected.push({
    file: 'explorer/e5-bug-hunters.yaml',
    line: 1,
    message: /lessonId "e5" is already used by explorer\/e5-another-bug-hunt\.yaml/,
  })

  fs.mkdirSync(path.join(dir, 'wizard'))
  fs.copyFileSync(path.join(dir, 'builder/b1-what-is-an-algorithm.yaml'), path.join(dir, 'wizard/w1-magic.yaml'))
  expected.push({ file: 'wizard/', line: 1, message: /unknown tier folder "wizard"/ })

  /** Replaces the first line of `file` holding `needle` with `text`, and expects `message` at it. */
  const breakLine = (file: string, needle: string, text: string, message: RegExp) => {
    const line = lineOf(path.join(dir, file), needle)
    replaceLine(path.join(dir, file), line, text)
    expected.push({ file, line, message })
  }
  breakLine(
    'builder/b1-what-is-an-algorithm.yaml',
    'answer:',
    '    answer: 7',
    /answer must be the 0-based index of the right choice/,
  )
  breakLine(
    'builder/b2-loops-save-time.yaml',
    '- type: bullets',
    '  - type: hologram',
    /unknown type "hologram"; slide types are/,
  )
  breakLine(
    'builder/b3-events-make-things-happen.yaml',
    'title:',
    'title: "Events Make Things Happen',
    /YAML syntax: Missing closing "quote/,
  )

  return { dir, expected }
}

useCliHarness()

describe('catalog validate', () => {
  it('accepts the sample catalog, read from CATALOG_DIR by default', async () => {
    const result = await cli(['catalog', 'validate', '--json'], { databaseUrl: newDatabaseUrl() })
    expect(result.status).toBe(0)
    expect(jsonOf(result)).toMatchObject({ ok: true, tiers: 3, lessons: 30 })
  })

  it('reports every problem of a broken copy with its file and line, and exits 1', async () => {
    const { dir, expected } = brokenCatalog()
    const databaseUrl = newDatabaseUrl()
    const [json, text] = await Promise.all([
      cli(['catalog', 'validate', dir, '--json'], { databaseUrl }),
      cli(['catalog', 'validate', dir], { databaseUrl }),
    ])

    expect(json.status).toBe(1)
    const document = jsonOf(json)
    expect(document.ok).toBe(false)
    for (const problem of expected) {
      expect(document.error.problems, `${problem.file}:${problem.line}`).toContainEqual({
        file: problem.file,
        line: problem.line,
        message: expect.stringMatching(problem.message),
      })
    }
    expect(document.error.problems).toHaveLength(expected.length)

    expect(text.status).toBe(1)
    expect(text.stdout).toBe('')
    const lines = text.stderr.trim().split('\n')
    for (const problem of expected) {
      expect(
        lines.some((line) => line.startsWith(`${problem.file}:${problem.line}: `) && problem.message.test(line)),
        `${problem.file}:${problem.line}`,
      ).toBe(true)
    }
    expect(lines.at(-1)).toBe(`error: ${dir}: ${expected.length} problems`)
  })
})

describe('catalog import', () => {
  it('imports the catalog, and leaves it untouched when a later import is broken', async () => {
    const databaseUrl = newDatabaseUrl()
    const good = await cli(['catalog', 'import', CATALOG_DIR, '--json'], { databaseUrl })
    expect(good.status).toBe(0)
    expect(jsonOf(good)).toEqual({ ok: true, dir: CATALOG_DIR, tiers: 3, lessons: 30, catalogVersion: 1 })
    const before = await withStorage(databaseUrl, ({ db }) => readCatalog(db))
    expect(before.lessons).toHaveLength(30)

    const { dir, expected } = brokenCatalog()
    const broken = await cli(['catalog', 'import', dir], { databaseUrl })
    expect(broken.status).toBe(1)
    expect(broken.stderr).toContain('the stored catalog was not changed')
    expect(broken.stderr.trim().split('\n')).toHaveLength(expected.length + 1)

    const after = await withStorage(databaseUrl, ({ db }) => readCatalog(db))
    expect(after).toEqual(before)
  })

  it('says what it did in text', async () => {
    const result = await cli(['catalog', 'import'], { databaseUrl: newDatabaseUrl() })
    expect(result.status).toBe(0)
    expect(result.stdout).toBe(`imported 3 tiers and 30 lessons from ${CATALOG_DIR}; catalog version 1\n`)
  })
})
