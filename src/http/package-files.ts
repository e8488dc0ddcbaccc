/**
 * Files that ship with the package beside the code (CHANGELOG.md, docs/, what the build leaves
 * in dist/), found from this module's own place rather than the working directory: the sources
 * (src/http/), the bundle (dist/) and tsc's output (dist/http/) all sit below the folder whose
 * package.json is the package's, whatever folder the server was started from.
 */
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** The nearest folder at or above `from` that holds a package.json. */
export function packageRoot(from: string = path.dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir
    if (path.dirname(dir) === dir) throw new Error(`no package.json at or above ${from}`)
  }
}

/** A file of the package as text, or undefined when it is not there (a partial copy of the package). */
export function readPackageFile(relative: string, root: string = packageRoot()): string | undefined {
  try {
    return fs.readFileSync(path.join(root, relative), 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}
