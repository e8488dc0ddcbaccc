/**
 * Builds dist/ before any test file runs, as `npm start` does: only when the sources changed since
 * the last build (scripts/build.mjs). The CLI and server tests start the built program as a real
 * child process, exactly as an operator would.
 */
import { spawnSync } from 'node:child_process'
import path from 'node:path'

export default function setup(): void {
  const root = path.resolve(import.meta.dirname, '..')
  const build = spawnSync(process.execPath, [path.join(root, 'scripts/build.mjs'), '--if-stale'], { encoding: 'utf8' })
  if (build.status !== 0) throw new Error(`build failed:\n${build.stdout}${build.stderr}`)
}
