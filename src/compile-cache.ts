/**
 * Node's compile cache for the server's code (`module.enableCompileCache`): what V8 compiled at
 * one start is kept and handed back to V8 at the next, which then skips compiling the bundle.
 *
 * The cache holds code that V8 runs, guarded only by CRC-32s anyone can recompute, so it may
 * change what runs just as the code itself can. It is therefore kept only where nobody but the
 * service can write: never inside the folder the code is loaded from (so that folder can stay
 * read-only to the service, which then writes nothing there), in a real directory (not a
 * symbolic link) owned by the service's user and writable by no one else, as OpenSSH's
 * StrictModes asks of a user's keys. A folder that fails a check is not used, and the start
 * says why; the server then compiles its code at every start, as it always can.
 */
import fs from 'node:fs'
import module from 'node:module'
import path from 'node:path'

export type CompileCache =
  | { readonly enabled: true; readonly directory: string; flush(): void }
  /** `refused`: a folder was named and failed a check, or Node would not use it. */
  | { readonly enabled: false; readonly reason: string; readonly refused: boolean }

/** The file-system facts the checks read; a test passes its own owner. */
export interface CacheOwner {
  uid: number | undefined
}

const currentUser: CacheOwner = { uid: process.getuid?.() }

/**
 * Turns the compile cache on in `directory` for every module loaded from now on, unless the
 * folder is unsafe (see above); `codeDir` is the folder the server's code is loaded from.
 */
export function enableCompileCache(
  directory: string | undefined,
  codeDir: string,
  owner: CacheOwner = currentUser,
): CompileCache {
  if (directory === undefined) return { enabled: false, reason: 'COMPILE_CACHE_DIR is off', refused: false }
  const unsafe = whyUnsafe(directory, codeDir, owner)
  if (unsafe !== undefined) return { enabled: false, reason: unsafe, refused: true }
  const result = module.enableCompileCache(directory)
  const { ENABLED, ALREADY_ENABLED } = module.constants.compileCacheStatus
  if (result.status === ALREADY_ENABLED)
    return { enabled: false, reason: `NODE_COMPILE_CACHE chose ${result.directory} already; unset it`, refused: true }
  if (result.status !== ENABLED)
    return { enabled: false, reason: result.message ?? 'Node did not enable its compile cache', refused: true }
  return { enabled: true, directory, flush: () => module.flushCompileCache() }
}

function isInside(child: string, parent: string): boolean {
  const relative = path.relative(parent, child)
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative))
}

/** Where `file` is once every symbolic link on its way is followed, whether or not it exists yet. */
function realLocation(file: string): string {
  const absolute = path.resolve(file)
  try {
    return fs.realpathSync(absolute)
  } catch {
    const parent = path.dirname(absolute)
    return parent === absolute ? absolute : path.join(realLocation(parent), path.basename(absolute))
  }
}

/** Why `directory` must not hold the cache, or undefined when it may; creates it (0700) if absent. */
export function whyUnsafe(directory: string, codeDir: string, owner: CacheOwner): string | undefined {
  // Checked before anything is created, so that nothing is ever written beside the code.
  if (isInside(realLocation(directory), realLocation(codeDir)))
    return `${directory} is inside the folder the code is loaded from (${codeDir})`
  try {
    fs.mkdirSync(directory, { recursive: true, mode: 0o700 })
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    // A file of that name is named as such below.
    if (code !== 'EEXIST') return `${directory} cannot be created (${code ?? String(error)})`
  }
  const stat = fs.lstatSync(directory)
  if (stat.isSymbolicLink()) return `${directory} is a symbolic link; name the directory itself`
  if (!stat.isDirectory()) return `${directory} is not a directory`
  if (owner.uid !== undefined && stat.uid !== owner.uid)
    return `${directory} belongs to another user (uid ${stat.uid}); the service's user must own it`
  if ((stat.mode & 0o022) !== 0) return `${directory} is writable by other users; chmod go-w it`
  return undefined
}
