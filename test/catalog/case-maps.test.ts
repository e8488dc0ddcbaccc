/**
 * The catalog reader attaches each lesson code's CASE item from its framework's map, when the map
 * has it, and never otherwise; a broken map fails the catalog with its file and line.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { readCatalogDir } from '../../src/catalog/catalog-files.js'
import { CATALOG_DIR, tempDir } from '../helper.js'
import { CASE_ITEMS, catalogWithCaseMap } from '../support/case-fixture.js'

const folders: string[] = []
function copy(): string {
  const dir = tempDir('curriculum-case-')
  folders.push(dir)
  return catalogWithCaseMap(CATALOG_DIR, dir)
}
afterAll(() => {
  for (const dir of folders) fs.rmSync(dir, { recursive: true, force: true })
})

function lessonsOf(dir: string) {
  const result = readCatalogDir(dir)
  if (!result.ok) throw new Error(JSON.stringify(result.problems, null, 2))
  return result.catalog.lessons
}

function problemsOf(dir: string) {
  const result = readCatalogDir(dir)
  if (result.ok) throw new Error('the catalog was accepted')
  return result.problems
}

describe('CASE maps in the catalog folder', () => {
  it('give each code the map has its identifier and URI, and the others none', () => {
    const lessons = lessonsOf(copy())
    const b1 = lessons.find((lesson) => lesson.slug === 'builder/b1-what-is-an-algorithm')!
    expect(b1.standards).toEqual({ csta: ['1B-AP-08', '1B-AP-11'] })
    expect(b1.standardsAlignment).toEqual([
      {
        framework: 'csta',
        code: '1B-AP-08',
        caseIdentifier: CASE_ITEMS['1B-AP-08']!.identifier,
        caseUri: CASE_ITEMS['1B-AP-08']!.uri,
      },
      {
        framework: 'csta',
        code: '1B-AP-11',
        caseIdentifier: CASE_ITEMS['1B-AP-11']!.identifier,
        caseUri: CASE_ITEMS['1B-AP-11']!.uri,
      },
    ])
    // 1B-AP-09 was left out of the map (its parent is in another document): no identifier.
    const nine = lessons.find((lesson) => lesson.standards.csta?.includes('1B-AP-09'))!
    expect(nine.standardsAlignment).toEqual([{ framework: 'csta', code: '1B-AP-09' }])
    for (const lesson of lessons) {
      const codes = Object.entries(lesson.standards).flatMap(([framework, list]) =>
        list.map((code) => ({ framework, code })),
      )
      expect(lesson.standardsAlignment.map(({ framework, code }) => ({ framework, code }))).toEqual(codes)
      for (const entry of lesson.standardsAlignment)
        expect(entry.caseIdentifier).toBe(CASE_ITEMS[entry.code]?.identifier)
    }
  })

  it('without a case folder, every code is without an identifier', () => {
    for (const lesson of lessonsOf(CATALOG_DIR))
      for (const entry of lesson.standardsAlignment) expect(Object.keys(entry)).toEqual(['framework', 'code'])
  })

  it("applies a map only to its own framework's codes", () => {
    const dir = copy()
    fs.renameSync(path.join(dir, 'case', 'csta.json'), path.join(dir, 'case', 'other-framework.json'))
    for (const lesson of lessonsOf(dir))
      for (const entry of lesson.standardsAlignment) expect(entry.caseIdentifier).toBeUndefined()
  })

  it('reports a broken map with its file and line, and a file that is not a map', () => {
    const dir = copy()
    const file = path.join(dir, 'case', 'csta.json')
    const text = fs.readFileSync(file, 'utf8')
    const lines = text.split('\n')
    const at = (needle: string) => lines.findIndex((line) => line.includes(needle)) + 1
    fs.writeFileSync(
      file,
      text
        .replace(CASE_ITEMS['1A-AP-08']!.identifier, 'not-a-uuid')
        .replace(`"uri": "${CASE_ITEMS['1B-AP-08']!.uri}"`, '"uri": "ftp://case.example.org/x"'),
    )
    fs.writeFileSync(path.join(dir, 'case', 'CSTA.json'), '{}')
    fs.writeFileSync(path.join(dir, 'case', 'notes.txt'), 'hello')
    fs.writeFileSync(path.join(dir, 'case', 'broken.json'), '{"codes": {')
    const problems = problemsOf(dir)
    const broken = problems.filter((problem) => problem.file === 'case/broken.json')
    expect(broken.length).toBeGreaterThan(0)
    for (const problem of broken) expect(problem.message).toMatch(/^YAML syntax: /)
    expect(problems.filter((problem) => problem.file !== 'case/broken.json')).toEqual([
      expect.objectContaining({ file: 'case/CSTA.json', line: 1 }),
      {
        file: 'case/csta.json',
        line: at(CASE_ITEMS['1A-AP-08']!.identifier),
        message: `code "1A-AP-08"'s identifier must be a UUID (got "not-a-uuid")`,
      },
      {
        file: 'case/csta.json',
        line: at(CASE_ITEMS['1B-AP-08']!.uri),
        message: `code "1B-AP-08"'s uri must be an http or https URI of at most 2048 characters`,
      },
      expect.objectContaining({ file: 'case/notes.txt', line: 1 }),
    ])
    expect(problems[0]!.message).toMatch(/one <framework>\.json per framework/)
  })

  it('refuses a map that gives one identifier to two codes, and one missing a field', () => {
    const dir = copy()
    const file = path.join(dir, 'case', 'csta.json')
    const map = JSON.parse(fs.readFileSync(file, 'utf8'))
    map.codes['1A-AP-11'].identifier = map.codes['1A-AP-08'].identifier.toUpperCase()
    delete map.codes['1B-AP-10'].uri
    fs.writeFileSync(file, JSON.stringify(map, null, 2))
    expect(problemsOf(dir).map((problem) => problem.message)).toEqual([
      'code "1A-AP-11" has the identifier of code "1A-AP-08": each item has one code',
      'code "1B-AP-10" is missing required field "uri"',
    ])
  })
})
