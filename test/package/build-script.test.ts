/**
 * scripts/build.mjs with `--if-stale` (npm start, npm install's prepare, the test run) builds only
 * when the sources changed since the last build, so a restart starts at once and `npx curriculum`
 * never rebuilds under a running server. Run on a small project of its own whose tsc and rolldown
 * are stand-ins that count their runs.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { tempDir } from '../helper.js'

const SCRIPT = path.resolve(import.meta.dirname, '../../scripts/build.mjs')

/** A stand-in build tool: appends its name to runs.log and writes the given outputs. */
function standIn(root: string, name: string, outputs: string[]): void {
  const file = path.join(root, 'node_modules', '.bin', name)
  const writes = outputs
    .map((output) => `mkdir -p "$(dirname dist/${output})" && echo built > dist/${output}`)
    .join('\n')
  fs.writeFileSync(file, `#!/bin/sh\necho ${name} >> runs.log\n${writes}\n`, { mode: 0o755 })
}

function project(): string {
  const root = tempDir('build-script-')
  fs.mkdirSync(path.join(root, 'scripts'))
  fs.copyFileSync(SCRIPT, path.join(root, 'scripts', 'build.mjs'))
  fs.mkdirSync(path.join(root, 'src', 'http'), { recursive: true })
  fs.writeFileSync(path.join(root, 'src', 'http', 'a.ts'), 'export const a = 1\n')
  fs.writeFileSync(path.join(root, 'package.json'), '{}\n')
  fs.mkdirSync(path.join(root, 'node_modules', '.bin'), { recursive: true })
  standIn(root, 'tsc', ['cli/index.js'])
  standIn(root, 'rolldown', ['server.js', 'server-bundle.cjs'])
  // The collection's step, run with node: it appends its name and writes its file the same way.
  const collection = 'curriculum-api.postman_collection.json'
  fs.writeFileSync(
    path.join(root, 'scripts', 'postman-collection.mjs'),
    "import fs from 'node:fs'\nfs.appendFileSync('runs.log', 'postman\\n')\n" +
      `fs.writeFileSync('dist/${collection}', '{}')\n`,
  )
  return root
}

function build(root: string, ...args: string[]): string[] {
  const run = spawnSync(process.execPath, [path.join(root, 'scripts', 'build.mjs'), ...args], {
    cwd: root,
    encoding: 'utf8',
  })
  expect(run.status, run.stderr).toBe(0)
  const log = path.join(root, 'runs.log')
  return fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n') : []
}

describe('scripts/build.mjs', () => {
  it('builds when nothing was built, then not again until a source changes', () => {
    const root = project()
    expect(build(root, '--if-stale')).toEqual(['tsc', 'rolldown', 'postman'])
    expect(build(root, '--if-stale')).toHaveLength(3)
    // An edit, even one that leaves the file's time as it was, is a change.
    const source = path.join(root, 'src', 'http', 'a.ts')
    const { atime, mtime } = fs.statSync(source)
    fs.writeFileSync(source, 'export const a = 2\n')
    fs.utimesSync(source, atime, mtime)
    expect(build(root, '--if-stale')).toHaveLength(6)
    expect(build(root, '--if-stale')).toHaveLength(6)
    fs.writeFileSync(path.join(root, 'src', 'b.ts'), 'export const b = 1\n')
    expect(build(root, '--if-stale')).toHaveLength(9)
  })

  it('builds again when an output is missing, and always without --if-stale, from an empty dist/', () => {
    const root = project()
    build(root, '--if-stale')
    fs.rmSync(path.join(root, 'dist', 'server-bundle.cjs'))
    expect(build(root, '--if-stale')).toHaveLength(6)
    fs.rmSync(path.join(root, 'dist', 'curriculum-api.postman_collection.json'))
    expect(build(root, '--if-stale')).toHaveLength(9)
    fs.writeFileSync(path.join(root, 'dist', 'left-over.js'), '')
    expect(build(root)).toHaveLength(12)
    expect(fs.existsSync(path.join(root, 'dist', 'left-over.js'))).toBe(false)
  })
})
