/**
 * Builds dist/ with the project's own build script, so the bench measures what `npm start` runs,
 * then copies it to bench/.data/dist: every server of the run starts from that copy, so a
 * rebuild of dist/ by someone working on the service meanwhile cannot change the code under
 * measurement half-way through a run.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { DIST, ROOT, SERVICE_DIST } from './paths.mjs'

export function buildService() {
  const started = performance.now()
  const result = spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' })
  if (result.status !== 0) throw new Error(`npm run build failed (exit ${result.status})`)
  snapshotDist()
  return (performance.now() - started) / 1000
}

/** Copies dist/ to bench/.data/dist (declaration files left out: tsc would type-check them there). */
export function snapshotDist() {
  if (!fs.existsSync(path.join(DIST, 'server.js'))) throw new Error('dist/server.js is missing: run npm run build')
  fs.rmSync(SERVICE_DIST, { recursive: true, force: true })
  fs.cpSync(DIST, SERVICE_DIST, { recursive: true, filter: (source) => !source.endsWith('.d.ts') })
}

/** The commit measured, and whether the working tree differed from it (read-only git calls). */
export function sourceRevision() {
  const git = (...args) => spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' })
  const head = git('rev-parse', '--short', 'HEAD')
  if (head.status !== 0) return undefined
  const dirty = git('status', '--porcelain', '--', 'src').stdout.trim() !== ''
  return { commit: head.stdout.trim(), dirty }
}
