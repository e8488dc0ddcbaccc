import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { readCatalogDir } from '../../src/catalog/catalog-files.js'
import { CATALOG_DIR, tempDir } from '../helper.js'

/** A copy of the sample catalog to break. */
function copyCatalog(): string {
  const dir = path.join(tempDir(), 'catalog')
  fs.cpSync(CATALOG_DIR, dir, { recursive: true })
  return dir
}

function edit(dir: string, file: string, change: (text: string) => string): void {
  const full = path.join(dir, file)
  fs.writeFileSync(full, change(fs.readFileSync(full, 'utf8')))
}

function lineOf(dir: string, file: string, needle: string): number {
  return (
    fs
      .readFileSync(path.join(dir, file), 'utf8')
      .split('\n')
      .findIndex((line) => line.includes(needle)) + 1
  )
}

describe('reading the curriculum files', () => {
  it('accepts the sample catalog: three tiers, at least 8 lessons each, computed fields', () => {
    const result = readCatalogDir(CATALOG_DIR)
    if (!result.ok) throw new Error(JSON.stringify(result.problems, null, 2))
    const { tiers, lessons } = result.catalog
    expect(tiers.map((tier) => tier.id)).toEqual(['explorer', 'builder', 'innovator'])
    for (const tier of tiers)
      expect(lessons.filter((lesson) => lesson.tier === tier.id).length).toBeGreaterThanOrEqual(8)
    for (const lesson of lessons) {
      expect(lesson.slideCount).toBe(lesson.slides.length)
      expect(lesson.contentTypes).toEqual([...new Set(lesson.slides.map((slide) => slide.type))].sort())
      expect(lesson.slug).toMatch(new RegExp(`^${lesson.tier}/${lesson.lessonId}-[a-z0-9-]+$`))
      for (const codes of Object.values(lesson.standards))
        for (const code of codes) expect(code).toMatch(/^(1A|1B|2|3A|3B)-(CS|NI|DA|AP|IC)-\d\d$/)
    }
    expect(lessons.map((lesson) => lesson.position)).toEqual(lessons.map((_, index) => index))
    expect(lessons.some((lesson) => Object.keys(lesson.standards).length === 0)).toBe(true)
  })

  it('reports every problem at once, each with its file and line', () => {
    const dir = copyCatalog()
    const quiz = 'explorer/e1-robots-follow-instructions.yaml'
    edit(dir, quiz, (text) => text.replace(/answer: \d+/, 'answer: 9'))
    edit(dir, 'builder/b2-loops-save-time.yaml', (text) => text.replace('type: bullets', 'type: video'))
    edit(dir, 'builder/b3-events-make-things-happen.yaml', (text) => text.replace(/^lessonId: b3$/m, 'lessonId: b33'))
    edit(dir, 'innovator/i1-hello-python.yaml', (text) => text.replace(/^title: .*$/m, 'title: Hello: Python'))
    edit(dir, 'innovator/i2-variables-and-data-types.yaml', (text) => text.replace(/csta: \[/, 'csta: [NOT-A-CODE, '))
    edit(dir, 'tiers.yaml', (text) => text.replace('ageRange: 8-10', 'ageRange: ten'))
    fs.copyFileSync(path.join(dir, 'explorer/e2-steps-in-order.yaml'), path.join(dir, 'explorer/e2-another-copy.yaml'))
    fs.writeFileSync(path.join(dir, 'explorer/E11-Bad Name.yaml'), 'lessonId: e11\n')
    fs.mkdirSync(path.join(dir, 'wizard'))

    const result = readCatalogDir(dir)
    expect(result.ok).toBe(false)
    if (result.ok) return
    const found = result.problems.map((p) => `${p.file}:${p.line}: ${p.message}`)
    const expectProblem = (file: string, line: number, pattern: RegExp) =>
      expect(
        found.some((f) => f.startsWith(`${file}:${line}: `) && pattern.test(f)),
        `${file}:${line} ${pattern}\n${found.join('\n')}`,
      ).toBe(true)
    expectProblem(quiz, lineOf(dir, quiz, 'answer: 9'), /answer must be the 0-based index/)
    expectProblem(
      'builder/b2-loops-save-time.yaml',
      lineOf(dir, 'builder/b2-loops-save-time.yaml', 'type: video'),
      /unknown type "video"/,
    )
    expectProblem(
      'builder/b3-events-make-things-happen.yaml',
      lineOf(dir, 'builder/b3-events-make-things-happen.yaml', 'lessonId: b33'),
      /does not match the file name/,
    )
    expectProblem(
      'innovator/i1-hello-python.yaml',
      lineOf(dir, 'innovator/i1-hello-python.yaml', 'title: Hello: Python'),
      /YAML syntax/,
    )
    expectProblem(
      'innovator/i2-variables-and-data-types.yaml',
      lineOf(dir, 'innovator/i2-variables-and-data-types.yaml', 'NOT-A-CODE'),
      /not a CSTA K-12 standard code/,
    )
    expectProblem('tiers.yaml', lineOf(dir, 'tiers.yaml', 'ageRange: ten'), /ageRange must be written <min>-<max>/)
    expectProblem('explorer/e2-steps-in-order.yaml', 1, /lessonId "e2" is already used/)
    expectProblem('explorer/E11-Bad Name.yaml', 1, /lesson file names have the form/)
    expectProblem('wizard/', 1, /unknown tier folder "wizard"/)
    expect(found.length).toBe(9)
  })

  it('refuses unknown and missing fields in slides and lessons', () => {
    const dir = copyCatalog()
    const file = 'builder/b1-what-is-an-algorithm.yaml'
    edit(dir, file, (text) =>
      text
        .replace(/^title: (.*)$/m, 'title: $1\nauthor: Someone')
        .replace(/^ {4}heading: (.*)$/m, '    heading: $1\n    colour: red'),
    )
    const result = readCatalogDir(dir)
    expect(result.ok).toBe(false)
    if (result.ok) return
    expect(result.problems.map((p) => p.message)).toEqual([
      expect.stringMatching(/a lesson has unknown field "author"/),
      expect.stringMatching(/slide 1 \(\w+\) has unknown field "colour"/),
    ])
    expect(result.problems[0]!.line).toBe(lineOf(dir, file, 'author: Someone'))
    expect(result.problems[1]!.line).toBe(lineOf(dir, file, 'colour: red'))
  })

  it('requires every tier in tiers.yaml', () => {
    const dir = copyCatalog()
    edit(dir, 'tiers.yaml', (text) => text.replace(/- id: innovator[\s\S]*$/, ''))
    const result = readCatalogDir(dir)
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.problems.map((p) => p.message)).toContain('tier "innovator" is missing')
  })
})
