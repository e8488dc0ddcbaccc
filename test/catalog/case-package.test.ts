/**
 * A CASE package becomes a framework's map only through the document's isChildOf tree, copied as
 * it is; anything malformed or hostile refuses the whole package with the place of each problem.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { caseMapText, readCaseMap } from '../../src/catalog/case-map.js'
import {
  type CasePackageResult,
  casePackageMap,
  findCycle,
  MAX_PACKAGE_BYTES,
  readCasePackage,
  readPackageText,
} from '../../src/catalog/case-package.js'
import { SourceFile } from '../../src/catalog/source-file.js'
import { tempDir } from '../helper.js'
import { CASE_DOCUMENT, CASE_ITEMS, CASE_PACKAGE, casePackageJson } from '../support/case-fixture.js'

const folders: string[] = []
function folder(): string {
  const dir = tempDir('curriculum-case-')
  folders.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of folders) fs.rmSync(dir, { recursive: true, force: true })
})

function refused(result: CasePackageResult) {
  if (result.ok) throw new Error('the package was accepted')
  return result.problems
}

function accepted(result: CasePackageResult) {
  if (!result.ok) throw new Error(`refused: ${JSON.stringify(result.problems)}`)
  return result
}

const ID = 'cafe0000-0000-4000-8000-'
const node = (identifier: string) => ({ identifier, uri: `https://case.example.org/uri/${identifier}`, title: 'x' })
const childOf = (child: string, parent: string) => ({
  associationType: 'isChildOf',
  originNodeURI: node(child),
  destinationNodeURI: node(parent),
})

describe('reading a CASE package', () => {
  it('maps each code of the document to its item, identifiers and URIs as the package has them', () => {
    const result = accepted(readCasePackage(fs.readFileSync(CASE_PACKAGE, 'utf8')))
    expect(result.map.document).toEqual(CASE_DOCUMENT)
    expect(Object.fromEntries(result.map.codes)).toEqual(CASE_ITEMS)
    expect({ items: result.items, uncoded: result.uncoded }).toEqual({ items: 8, uncoded: 2 })
    // Its only parent is in another document; an isRelatedTo to the document does not count.
    expect(result.leftOut).toEqual([
      {
        path: 'CFItems[7]',
        message: `left out "1B-AP-09" (${ID}00000001b009): no isChildOf path leads from it to the CFDocument`,
      },
    ])
  })

  it('needs the whole chain: an item under a heading that is not under the document is left out', () => {
    const pkg = casePackageJson()
    // Level 1A's own link to the document goes: its two codes are no longer shown to belong.
    pkg.CFAssociations = pkg.CFAssociations.filter(
      (a: { originNodeURI: { identifier: string } }) => a.originNodeURI.identifier !== `${ID}0000000001a0`,
    )
    const result = accepted(casePackageMap(pkg))
    expect([...result.map.codes.keys()].sort()).toEqual(['1B-AP-08', '1B-AP-10', '1B-AP-11'])
    expect(result.leftOut.map((item) => item.message.match(/"(.*?)"/)![1])).toEqual([
      '1A-AP-08',
      '1A-AP-11',
      '1B-AP-09',
    ])
  })

  it("matches identifiers of associations in either case, and keeps the item's own spelling", () => {
    const result = accepted(readCasePackage(fs.readFileSync(CASE_PACKAGE, 'utf8')))
    // The item says CAFE...B011; the association that places it says cafe...b011.
    expect(result.map.codes.get('1B-AP-11')!.identifier).toBe('CAFE0000-0000-4000-8000-00000001B011')
  })

  it('writes the map with sorted keys, two-space indent and a final newline, and reads it back', () => {
    const result = accepted(readCasePackage(fs.readFileSync(CASE_PACKAGE, 'utf8')))
    const text = caseMapText(result.map)
    expect(text.endsWith('}\n')).toBe(true)
    expect(text).toBe(`${JSON.stringify(JSON.parse(text), null, 2)}\n`)
    const parsed = JSON.parse(text)
    expect(Object.keys(parsed)).toEqual(['codes', 'document'])
    expect(Object.keys(parsed.codes)).toEqual([...Object.keys(CASE_ITEMS)].sort())
    expect(Object.keys(parsed.document)).toEqual(['identifier', 'title', 'uri'])
    // Whatever order the package lists its items in, the same bytes.
    const shuffled = casePackageJson()
    shuffled.CFItems.reverse()
    shuffled.CFAssociations.reverse()
    expect(caseMapText(accepted(casePackageMap(shuffled)).map)).toBe(text)
    const source = new SourceFile('case/csta.json', text)
    const map = readCaseMap(source)
    expect(source.problems).toEqual([])
    expect(map).toEqual(result.map)
  })

  it('orders codes by code unit, the same in every locale, numbers and all', () => {
    const codes = new Map([
      ['b', { identifier: `${ID}000000000002`, uri: 'https://x.example/2' }],
      ['10', { identifier: `${ID}000000000003`, uri: 'https://x.example/3' }],
      ['2', { identifier: `${ID}000000000004`, uri: 'https://x.example/4' }],
      ['B', { identifier: `${ID}000000000005`, uri: 'https://x.example/5' }],
    ])
    const text = caseMapText({ document: CASE_DOCUMENT, codes })
    expect([...text.matchAll(/^ {4}"(.*?)": \{$/gm)].map((match) => match[1])).toEqual(['10', '2', 'B', 'b'])
  })
})

describe('a hostile or malformed package', () => {
  it('refuses text that is not JSON, and JSON that is not a package', () => {
    expect(refused(readCasePackage('{"CFDocument": '))[0]!.message).toMatch(/^not JSON: /)
    expect(refused(readCasePackage('[]'))).toEqual([
      { path: '', message: 'a CFPackage is a JSON object with CFDocument, CFItems and CFAssociations' },
    ])
    expect(refused(readCasePackage('{"CFDocument": {}}')).map((p) => p.path)).toEqual(['CFItems', 'CFAssociations'])
    // A byte order mark is no problem.
    accepted(readCasePackage(`\ufeff${fs.readFileSync(CASE_PACKAGE, 'utf8')}`))
  })

  it('names each missing or malformed field by its place', () => {
    const pkg = casePackageJson()
    delete pkg.CFDocument.uri
    pkg.CFDocument.title = 42
    delete pkg.CFItems[2].identifier
    pkg.CFItems[3].identifier = 'item-3'
    pkg.CFItems[4].uri = 'javascript:alert(1)'
    pkg.CFItems[5].humanCodingScheme = ' 1B-AP-10'
    pkg.CFItems[6].humanCodingScheme = ['1B-AP-11']
    pkg.CFAssociations[0].destinationNodeURI = 'nowhere'
    delete pkg.CFAssociations[1].associationType
    expect(refused(casePackageMap(pkg))).toEqual([
      { path: 'CFDocument.uri', message: 'is missing' },
      { path: 'CFDocument.title', message: 'must be a string' },
      { path: 'CFItems[2].identifier', message: 'is missing' },
      { path: 'CFItems[3].identifier', message: 'must be a UUID, as CASE identifiers are (got "item-3")' },
      { path: 'CFItems[4].uri', message: 'must be an http or https URI of at most 2048 characters' },
      { path: 'CFItems[5].humanCodingScheme', message: '" 1B-AP-10" has spaces at its start or end' },
      { path: 'CFItems[6].humanCodingScheme', message: 'must be a string' },
      { path: 'CFAssociations[0].destinationNodeURI', message: 'must be an object with an identifier' },
      { path: 'CFAssociations[1].associationType', message: 'is missing' },
    ])
  })

  it('refuses control characters in codes and titles, URIs RFC 3986 would not write, and echoes no control character', () => {
    const control = /[\u0000-\u001f\u007f-\u009f]/
    const pkg = casePackageJson()
    pkg.CFDocument.title = 'Standards\u001b[2J'
    pkg.CFItems[2].humanCodingScheme = '1A\u009b31m'
    pkg.CFItems[3].identifier = '\u001b]0;owned\u0007'
    pkg.CFItems[4].uri = 'https://case.example.org/uri/a b'
    pkg.CFItems[5].uri = 'https://case.example.org/uri/\u00e9'
    const problems = refused(casePackageMap(pkg))
    expect(problems).toEqual([
      { path: 'CFDocument.title', message: 'must not hold a control character' },
      { path: 'CFItems[2].humanCodingScheme', message: '"1A\\u009b31m" holds a control character' },
      {
        path: 'CFItems[3].identifier',
        message: 'must be a UUID, as CASE identifiers are (got "\\u001b]0;owned\\u0007")',
      },
      { path: 'CFItems[4].uri', message: 'must be an http or https URI of at most 2048 characters' },
      { path: 'CFItems[5].uri', message: 'must be an http or https URI of at most 2048 characters' },
    ])
    for (const problem of problems) expect(problem.message).not.toMatch(control)
    expect(refused(readCasePackage('{"CFDocument": \u001b[2J}'))[0]!.message).not.toMatch(control)
  })

  it('refuses two items with one code, and two items with one identifier', () => {
    const pkg = casePackageJson()
    pkg.CFItems[3].humanCodingScheme = '1A-AP-08'
    expect(refused(casePackageMap(pkg))).toEqual([
      {
        path: 'CFItems[3].humanCodingScheme',
        message: '"1A-AP-08" is also the code of CFItems[2]: a code names one item',
      },
    ])
    const twice = casePackageJson()
    twice.CFItems[4].identifier = twice.CFItems[2].identifier.toUpperCase()
    expect(refused(casePackageMap(twice))).toEqual([
      { path: 'CFItems[4].identifier', message: 'is also the identifier of CFItems[2]: each item has its own' },
    ])
    const document = casePackageJson()
    document.CFItems[2].identifier = document.CFDocument.identifier
    expect(refused(casePackageMap(document))[0]!.message).toMatch(/is the CFDocument's identifier/)
  })

  it('refuses isChildOf in a circle, naming it by codes, a node its own parent included', () => {
    const pkg = casePackageJson()
    // 1A-AP-08 under 1A-AP-11 under 1A-AP-08, below a heading that is under the document.
    pkg.CFAssociations.push(childOf(`${ID}00000001a011`, `${ID}00000001a008`))
    pkg.CFAssociations.push(childOf(`${ID}00000001a008`, `${ID}00000001a011`))
    expect(refused(casePackageMap(pkg))).toEqual([
      {
        path: 'CFAssociations',
        message: 'isChildOf runs in a circle: 1A-AP-08 -> 1A-AP-11 -> 1A-AP-08; a framework is a tree',
      },
    ])
    const self = casePackageJson()
    self.CFAssociations.push(childOf(`${ID}00000001b008`, `${ID}00000001b008`))
    expect(refused(casePackageMap(self))[0]!.message).toMatch(/a circle: 1B-AP-08 -> 1B-AP-08;/)
    // A circle no item of the document reaches is refused as well.
    const apart = casePackageJson()
    apart.CFAssociations.push(childOf(`${ID}00000000ffff`, `${ID}00000001b009`))
    expect(refused(casePackageMap(apart))[0]!.message).toMatch(/a circle: /)
  })

  it('walks a chain 200,000 deep without exhausting the stack, and finds the circle closing it', () => {
    const parents = new Map<string, string[]>()
    const depth = 200_000
    for (let i = 0; i < depth; i++) parents.set(`n${i}`, [`n${i + 1}`])
    expect(findCycle(parents)).toBeUndefined()
    parents.set(`n${depth}`, ['n0'])
    expect(findCycle(parents)).toHaveLength(depth + 2)
  })

  it('refuses a package whose document has no coded item under it', () => {
    const pkg = casePackageJson()
    pkg.CFAssociations = []
    expect(refused(casePackageMap(pkg))).toEqual([
      {
        path: 'CFItems',
        message: 'no item with a code (humanCodingScheme) belongs to the CFDocument: nothing to map',
      },
    ])
  })

  it('lists the first 50 problems and counts the rest', () => {
    const pkg = casePackageJson()
    pkg.CFItems = Array.from({ length: 500 }, () => ({ identifier: 'not-a-uuid' }))
    const result = casePackageMap(pkg)
    if (result.ok) throw new Error('accepted')
    expect(result.problems).toHaveLength(50)
    expect(result.problems.length + result.more).toBe(1000)
  })
})

describe('reading a package file', () => {
  it('refuses a file over the limit before reading it, a folder, a missing file and bytes that are not UTF-8', () => {
    const dir = folder()
    const huge = path.join(dir, 'huge.json')
    // Sparse: the size is there, the bytes are not written.
    fs.writeFileSync(huge, '')
    fs.truncateSync(huge, MAX_PACKAGE_BYTES + 1)
    expect(() => readPackageText(huge)).toThrow(/is 67,108,865 bytes; a CFPackage is read up to 67,108,864$/)
    expect(() => readPackageText(dir)).toThrow(/is not a file$/)
    expect(() => readPackageText(path.join(dir, 'absent.json'))).toThrow(/^cannot read .*absent\.json: ENOENT/)
    const latin1 = path.join(dir, 'latin1.json')
    fs.writeFileSync(latin1, Buffer.from([0x7b, 0x22, 0xe9, 0x22, 0x7d]))
    expect(() => readPackageText(latin1)).toThrow(/is not UTF-8 text$/)
    expect(readPackageText(CASE_PACKAGE)).toBe(fs.readFileSync(CASE_PACKAGE, 'utf8'))
  })
})
