/**
 * Builds dist/ once before any test file runs, as `npm run build` does (tsc, then the server
 * bundle): the CLI and server tests start the built program as a real child process, exactly as
 * an operator would.
 */
import { spawnSync } from 'node:child_process'
import path from 'node:path'

export default function setup(): void {
  const root = path.resolve(import.meta.dirname, '..')
  const result = spawnSync(path.join(root, 'node_modules/.bin/tsc'), ['-p', path.join(root, 'tsconfig.build.json')], {
    encoding: 'utf8',
  })
  if (result.status !== 0) throw new Error(`build failed:\n${result.stdout}${result.stderr}`)
  const bundle = spawnSync(
    path.join(root, 'node_modules/.bin/rolldown'),
    ['-c', path.join(root, 'rolldown.config.ts'), '--logLevel', 'warn'],
    { cwd: root, encoding: 'utf8' },
  )
  if (bundle.status !== 0) throw new Error(`server bundle failed:\n${bundle.stdout}${bundle.stderr}`)
}
