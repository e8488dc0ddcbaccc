/**
 * The cheap tier (vitest.unit.config.ts) holds only files that run in their own process alone: no
 * file of it starts the app on a socket, a server, a child process or a browser, reaches a
 * service, or reads the build.
 */
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { UNIT_TESTS } from '../../vitest.unit.config.js'

const ROOT = path.resolve(import.meta.dirname, '../..')

/**
 * What a file of the tier must not name: each starts or reaches something outside the process.
 * A look at the file's own text, not at what its imports import: a guard against a file put in
 * the tier by mistake, not a proof.
 */
const OUTSIDE = [
  'buildTestApp',
  'listeningApp',
  'startServer',
  'cli-harness',
  'webhook-receiver',
  'support/services',
  'support/browser',
  'support/tcp-proxy',
  "'node:child_process'",
  "'node:http'",
  "'node:net'",
  'TEST_POSTGRES_URL',
  'TEST_REDIS_URL',
  'dist/',
]

/** The files the tier's patterns name: exact paths, or `folder/**\/*.test.ts`. */
function unitFiles(): string[] {
  return UNIT_TESTS.flatMap((pattern) => {
    if (!pattern.endsWith('/**/*.test.ts')) return [pattern]
    const folder = pattern.slice(0, -'/**/*.test.ts'.length)
    // A folder the tier names before any test stands in it.
    if (!fs.existsSync(path.join(ROOT, folder))) return []
    return (fs.readdirSync(path.join(ROOT, folder), { recursive: true }) as string[])
      .filter((name) => name.endsWith('.test.ts'))
      .map((name) => path.join(folder, name))
  })
}

describe('the unit tier', () => {
  it('names only files that exist', () => {
    const missing = UNIT_TESTS.filter((pattern) => !pattern.includes('*')).filter(
      (file) => !fs.existsSync(path.join(ROOT, file)),
    )
    expect(missing).toEqual([])
  })

  it('holds no file that starts or reaches anything outside its process', () => {
    // This file names them to look for them.
    const others = unitFiles().filter((file) => file !== 'test/package/unit-tier.test.ts')
    const found = others.flatMap((file) => {
      const text = fs.readFileSync(path.join(ROOT, file), 'utf8')
      return OUTSIDE.filter((name) => text.includes(name)).map((name) => `${file}: ${name}`)
    })
    expect(found).toEqual([])
  })
})
