/**
 * Builds dist/: every file with tsc (the CLI and the bench import those), then the server bundle
 * with rolldown (rolldown.config.ts), then the Postman collection of the OpenAPI document that
 * /docs serves (scripts/postman-collection.mjs, which builds the app from tsc's output). `--if-stale` builds only when the sources changed since the
 * last build, which `npm start`, `npm install` (prepare) and the test run use: a restart then
 * starts at once, and `npx curriculum`, which runs prepare, never rebuilds under a running server.
 *
 * A build is identified by the SHA-256 of its inputs' contents, not their times, so a checkout
 * that restores an older file is seen as a change too.
 */
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
const DIST = path.join(ROOT, 'dist')
const STAMP = path.join(DIST, '.inputs-sha256')
const INPUTS = [
  'src',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'rolldown.config.ts',
]
/** What a build leaves; a stamp without them (a half-deleted dist/) is no build. */
const OUTPUTS = ['server.js', 'server-bundle.cjs', 'cli/index.js', 'curriculum-api.postman_collection.json']

function inputsDigest() {
  const hash = createHash('sha256')
  const add = (relative) => {
    const file = path.join(ROOT, relative)
    if (fs.statSync(file).isDirectory()) {
      for (const name of fs.readdirSync(file).sort()) add(path.join(relative, name))
    } else {
      hash.update(`${relative}\0`).update(fs.readFileSync(file)).update('\0')
    }
  }
  for (const input of INPUTS) if (fs.existsSync(path.join(ROOT, input))) add(input)
  return hash.digest('hex')
}

function isCurrent(digest) {
  try {
    return (
      fs.readFileSync(STAMP, 'utf8') === digest && OUTPUTS.every((output) => fs.existsSync(path.join(DIST, output)))
    )
  } catch {
    return false
  }
}

const bin = (name) => path.join(ROOT, 'node_modules', '.bin', name)
const digest = inputsDigest()
if (!(process.argv.includes('--if-stale') && isCurrent(digest))) {
  // From nothing, so that no module of a deleted source is left behind to be loaded.
  fs.rmSync(DIST, { recursive: true, force: true })
  const run = (command, args) => execFileSync(command, args, { cwd: ROOT, stdio: 'inherit' })
  run(bin('tsc'), ['-p', 'tsconfig.build.json'])
  run(bin('rolldown'), ['-c', 'rolldown.config.ts', '--logLevel', 'warn'])
  run(process.execPath, [path.join(ROOT, 'scripts', 'postman-collection.mjs')])
  fs.writeFileSync(STAMP, digest)
}
