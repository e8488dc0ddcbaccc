/**
 * Source lines stay within the formatter's 120 columns. Biome wraps code but never a string
 * literal, so long descriptions and messages would otherwise creep back past it.
 *
 * Dashboard files stay short: each page group is a plugin of its own, so a file that outgrows
 * the limit has picked up a second page or job and should be split, not a closure that grows.
 */
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = path.resolve(import.meta.dirname, '../..')
const WIDTH = 120
const DASHBOARD_FILE_LINES = 250

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(file)
    return entry.name.endsWith('.ts') ? [file] : []
  })
}

describe('source layout', () => {
  it(`keeps every line of src/ within ${WIDTH} columns`, () => {
    const long = sourceFiles(path.join(ROOT, 'src')).flatMap((file) =>
      fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) => ([...line].length > WIDTH ? [`${path.relative(ROOT, file)}:${i + 1}`] : [])),
    )
    expect(long).toEqual([])
  })

  it(`keeps every file of src/dashboard within ${DASHBOARD_FILE_LINES} lines`, () => {
    const long = sourceFiles(path.join(ROOT, 'src/dashboard')).flatMap((file) => {
      const lines = fs.readFileSync(file, 'utf8').trimEnd().split('\n').length
      return lines > DASHBOARD_FILE_LINES ? [`${path.relative(ROOT, file)}: ${lines} lines`] : []
    })
    expect(long).toEqual([])
  })
})
