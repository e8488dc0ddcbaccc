/**
 * The server bundle holds only Latin-1 characters. V8 keeps every script's source text in
 * memory for the life of the process (functions are compiled when first called); a single
 * character above U+00FF makes it a two-byte string, which for dist/server-bundle.cjs is about 2 MB more
 * resident memory. rolldown.config.ts escapes what it can (`charset: 'ascii'`); it cannot escape
 * tagged template literals, whose raw text is observable, so those write such characters as
 * \u escapes in the source (the html tag uses the cooked text, which is the same).
 */
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = path.resolve(import.meta.dirname, '../..')

describe('the server bundle', () => {
  it('has no character above U+00FF (built by the global setup)', () => {
    const dist = path.join(ROOT, 'dist')
    // The entry and the bundle it loads, which holds the demo seed too (no chunks).
    const files = [path.join(dist, 'server.js'), path.join(dist, 'server-bundle.cjs')]
    const offenders: string[] = []
    for (const file of files) {
      const lines = fs.readFileSync(file, 'utf8').split('\n')
      lines.forEach((line, i) => {
        if (/[^\u0000-\u00ff]/.test(line))
          offenders.push(`${path.relative(ROOT, file)}:${i + 1}: ${line.trim().slice(0, 100)}`)
      })
    }
    expect(offenders).toEqual([])
  })
})
