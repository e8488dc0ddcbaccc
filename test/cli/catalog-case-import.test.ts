/**
 * `curriculum catalog case-import`: a CFPackage becomes `<catalog>/case/<framework>.json`, the same
 * bytes every time; a hostile or broken package writes nothing, an earlier map included; and the
 * next `catalog import` publishes the identifiers with the lessons.
 */
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { MAX_PACKAGE_BYTES } from '../../src/catalog/case-package.js'
import { readCatalog } from '../../src/storage/catalog-repository.js'
import { CASE_DOCUMENT, CASE_ITEMS, CASE_PACKAGE, caseMapOfFixture, casePackageJson } from '../support/case-fixture.js'
import { CATALOG_DIR, cli, jsonOf, newDatabaseUrl, tempDir, useCliHarness, withStorage } from './cli-harness.js'

useCliHarness()

/** A copy of the sample catalog, without maps. */
function catalogCopy(): string {
  const dir = path.join(tempDir(), 'catalog')
  fs.cpSync(CATALOG_DIR, dir, { recursive: true })
  return dir
}

/** A package file written from `json` (or raw text) in a folder of its own. */
function packageFile(json: unknown, name = 'package.json'): string {
  const file = path.join(tempDir(), name)
  fs.writeFileSync(file, typeof json === 'string' ? json : JSON.stringify(json))
  return file
}

describe('catalog case-import', () => {
  it('writes the map of the items the document holds, the same bytes each time, and says what it left out', async () => {
    const dir = catalogCopy()
    const databaseUrl = newDatabaseUrl()
    const map = path.join(dir, 'case', 'csta.json')
    const text = await cli(['catalog', 'case-import', CASE_PACKAGE, dir, '--framework', 'csta'], { databaseUrl })
    expect(text.status, text.stderr).toBe(0)
    expect(text.stdout.split('\n')).toEqual([
      `wrote ${map}: 5 codes of "${CASE_DOCUMENT.title}" (CASE document ${CASE_DOCUMENT.identifier}); ` +
        '2 items without a code not needed',
      'warning: 1 item with a code left out, not shown to belong to the document:',
      `  CFItems[7]: left out "1B-AP-09" (cafe0000-0000-4000-8000-00000001b009): no isChildOf path leads from it ` +
        'to the CFDocument',
      expect.stringMatching(/^5 of the \d+ csta codes the lessons name have an identifier; without one: .*1B-AP-09/),
      '',
    ])
    const written = fs.readFileSync(map, 'utf8')
    expect(written).toBe(caseMapOfFixture())
    expect(JSON.parse(written).codes).toEqual(CASE_ITEMS)
    expect(fs.readdirSync(path.dirname(map))).toEqual(['csta.json'])

    // CATALOG_DIR when no folder is named; the file is replaced by the same bytes.
    const again = await cli(['catalog', 'case-import', CASE_PACKAGE, '--framework', 'csta', '--json'], {
      databaseUrl,
      catalogDir: dir,
    })
    expect(again.status).toBe(0)
    expect(jsonOf(again)).toMatchObject({
      ok: true,
      file: map,
      framework: 'csta',
      replaced: true,
      document: CASE_DOCUMENT,
      codes: 5,
      items: 8,
      uncoded: 2,
      leftOut: [{ path: 'CFItems[7]', message: expect.stringContaining('"1B-AP-09"') }],
      catalog: { valid: true, withoutIdentifier: expect.arrayContaining(['1B-AP-09']) },
    })
    expect(fs.readFileSync(map, 'utf8')).toBe(written)
  })

  it('leaves the database alone; the next catalog import publishes the identifiers', async () => {
    const dir = catalogCopy()
    const databaseUrl = newDatabaseUrl()
    const run = await cli(['catalog', 'case-import', CASE_PACKAGE, dir, '--framework', 'csta'], { databaseUrl })
    expect(run.status).toBe(0)
    expect(fs.existsSync(databaseUrl.slice('sqlite:'.length))).toBe(false)

    const imported = await cli(['catalog', 'import', dir, '--json'], { databaseUrl })
    expect(imported.status, imported.stderr).toBe(0)
    const stored = await withStorage(databaseUrl, ({ db }) => readCatalog(db))
    const b1 = stored.lessons.find((lesson) => lesson.slug === 'builder/b1-what-is-an-algorithm')!
    expect(JSON.parse(b1.standards)).toEqual({ csta: ['1B-AP-08', '1B-AP-11'] })
    expect(JSON.parse(b1.standards_alignment!)).toEqual([
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
  })

  it('writes nothing for a broken or hostile package, and keeps the map that was there', async () => {
    const dir = catalogCopy()
    const databaseUrl = newDatabaseUrl()
    const map = path.join(dir, 'case', 'csta.json')
    expect(
      (await cli(['catalog', 'case-import', CASE_PACKAGE, dir, '--framework', 'csta'], { databaseUrl })).status,
    ).toBe(0)
    const before = fs.readFileSync(map, 'utf8')

    const circle = casePackageJson()
    const link = (child: string, parent: string) => ({
      associationType: 'isChildOf',
      originNodeURI: { identifier: `cafe0000-0000-4000-8000-0000000001${child}` },
      destinationNodeURI: { identifier: `cafe0000-0000-4000-8000-0000000001${parent}` },
    })
    circle.CFAssociations.push(link('a0', 'b0'), link('b0', 'a0'))
    const twice = casePackageJson()
    twice.CFItems[3].humanCodingScheme = '1A-AP-08'
    const noDocument = casePackageJson()
    delete noDocument.CFDocument
    const huge = packageFile('', 'huge.json')
    fs.truncateSync(huge, MAX_PACKAGE_BYTES + 1)
    const cases: [file: string, error: RegExp, problem?: RegExp][] = [
      [packageFile('{"CFDocument": {'), /: 1 problem; nothing was written$/, /^not JSON: /],
      [packageFile(circle), /1 problem; nothing was written$/, /isChildOf runs in a circle: /],
      [packageFile(twice), /1 problem; nothing was written$/, /"1A-AP-08" is also the code of CFItems\[2\]/],
      [packageFile(noDocument), /1 problem; nothing was written$/, /is missing: is this a CFPackage/],
      [huge, /is 67,108,865 bytes; a CFPackage is read up to 67,108,864; nothing was written$/],
      [path.join(tempDir(), 'absent.json'), /^cannot read .*ENOENT.*; nothing was written$/],
      [tempDir(), /is not a file; nothing was written$/],
    ]
    for (const [file, error, problem] of cases) {
      const result = await cli(['catalog', 'case-import', file, dir, '--framework', 'csta', '--json'], { databaseUrl })
      expect(result.status, file).toBe(1)
      const document = jsonOf(result)
      expect(document.ok).toBe(false)
      expect(document.error.message, file).toMatch(error)
      if (problem !== undefined) {
        expect(document.error.problems, file).toEqual([
          expect.objectContaining({ file, message: expect.stringMatching(problem) }),
        ])
      }
    }
    expect(fs.readFileSync(map, 'utf8')).toBe(before)
    expect(fs.readdirSync(path.dirname(map))).toEqual(['csta.json'])
  })

  it('names the place of each problem in text, and refuses a bad framework name or a missing catalog folder', async () => {
    const dir = catalogCopy()
    const databaseUrl = newDatabaseUrl()
    const broken = casePackageJson()
    broken.CFItems[2].uri = 'javascript:alert(1)'
    const file = packageFile(broken)
    const text = await cli(['catalog', 'case-import', file, dir, '--framework', 'csta'], { databaseUrl })
    expect(text.status).toBe(1)
    expect(text.stderr).toBe(
      `${file}: CFItems[2].uri: must be an http or https URI of at most 2048 characters\n` +
        `error: ${file}: 1 problem; nothing was written\n`,
    )
    for (const framework of ['CSTA', 'csta.json', '../csta', '']) {
      const result = await cli(['catalog', 'case-import', CASE_PACKAGE, dir, '--framework', framework], { databaseUrl })
      expect(result.status, framework).toBe(2)
    }
    expect((await cli(['catalog', 'case-import', CASE_PACKAGE, dir], { databaseUrl })).status).toBe(2)
    const missing = await cli(
      ['catalog', 'case-import', CASE_PACKAGE, path.join(dir, 'nowhere'), '--framework', 'csta'],
      {
        databaseUrl,
      },
    )
    expect(missing.status).toBe(1)
    expect(missing.stderr).toMatch(/nowhere: catalog folder not found; nothing was written\n$/)
    expect(fs.existsSync(path.join(dir, 'case'))).toBe(false)
  })
})
