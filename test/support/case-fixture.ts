/**
 * A made-up CASE package (test/fixtures/case/made-up-framework.cfpackage.json), and the sample
 * catalog copied with its map as `case/csta.json`. Its identifiers are invented (cafe0000-...) and
 * live only under test/: no real framework's identifiers are in this repository.
 *
 * The package: a document, two headings without codes (levels 1A and 1B) under it, five coded
 * items under them (1B-AP-10 under two parents; 1B-AP-11's identifier written in upper case), and
 * 1B-AP-09, whose only parent is in another document, so it is left out. An `isRelatedTo` from
 * 1B-AP-09 to the document and a `precedes` are not hierarchy and must not count.
 */
import fs from 'node:fs'
import path from 'node:path'
import { caseMapText } from '../../src/catalog/case-map.js'
import { readCasePackage } from '../../src/catalog/case-package.js'

export const CASE_PACKAGE = path.resolve(import.meta.dirname, '../fixtures/case/made-up-framework.cfpackage.json')

const ID = 'cafe0000-0000-4000-8000-'
const URI = 'https://case.example.org/uri/'

export const CASE_DOCUMENT = {
  identifier: `${ID}000000000000`,
  title: 'Made-up framework for tests (CSTA-style codes, not a real CASE document)',
  uri: `${URI}${ID}000000000000`,
}

/** The codes the map holds, each with its item as the package spells it. */
export const CASE_ITEMS: Record<string, { identifier: string; uri: string }> = {
  '1A-AP-08': { identifier: `${ID}00000001a008`, uri: `${URI}${ID}00000001a008` },
  '1A-AP-11': { identifier: `${ID}00000001a011`, uri: `${URI}${ID}00000001a011` },
  '1B-AP-08': { identifier: `${ID}00000001b008`, uri: `${URI}${ID}00000001b008` },
  '1B-AP-10': { identifier: `${ID}00000001b010`, uri: `${URI}${ID}00000001b010` },
  '1B-AP-11': {
    identifier: 'CAFE0000-0000-4000-8000-00000001B011',
    uri: `${URI}CAFE0000-0000-4000-8000-00000001B011`,
  },
}

/** The package's text, parsed, for a test to change. */
// biome-ignore lint/suspicious/noExplicitAny: each test breaks the package's fields its own way
export function casePackageJson(): any {
  return JSON.parse(fs.readFileSync(CASE_PACKAGE, 'utf8'))
}

/** The map the package gives, as its file holds it. */
export function caseMapOfFixture(): string {
  const result = readCasePackage(fs.readFileSync(CASE_PACKAGE, 'utf8'))
  if (!result.ok) throw new Error(`the fixture package is refused: ${JSON.stringify(result.problems)}`)
  return caseMapText(result.map)
}

/** A copy of `catalogDir` in `into` with the fixture's map as case/csta.json; returns the copy's path. */
export function catalogWithCaseMap(catalogDir: string, into: string): string {
  const dir = path.join(into, 'catalog')
  fs.cpSync(catalogDir, dir, { recursive: true })
  fs.mkdirSync(path.join(dir, 'case'), { recursive: true })
  fs.writeFileSync(path.join(dir, 'case', 'csta.json'), caseMapOfFixture())
  return dir
}
