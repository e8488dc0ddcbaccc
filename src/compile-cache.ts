/**
 * Node's compile cache for the server's code (`module.enableCompileCache`): what V8 compiled at
 * one start is kept and handed back to V8 at the next, which then skips compiling the bundle.
 *
 * The cache holds code that V8 runs, so it is used only from a folder that
 * compile-cache-folder.ts accepts: the service's own (Node reads and writes it), or one only
 * root can write (filled at install, which the server only reads). A folder that fails a check
 * is not used, and the start says why; the server then compiles its code at every start, as it
 * always can.
 */
import module from 'node:module'
import { type CacheUser, judgeCacheFolder } from './compile-cache-folder.js'

export type CompileCache =
  | {
      readonly enabled: true
      readonly directory: string
      /** `read-only`: filled at install by another user; the server never writes to it. */
      readonly access: 'read-write' | 'read-only'
      /** Writes what was compiled so far; for a read-write folder only. */
      flush(): void
    }
  /** `refused`: a folder was named and failed a check, or Node would not use it. */
  | { readonly enabled: false; readonly reason: string; readonly refused: boolean }

const currentUser: CacheUser = {
  uid: process.getuid?.(),
  gids: [...new Set([process.getgid?.(), ...(process.getgroups?.() ?? [])])].filter((gid) => gid !== undefined),
}

/**
 * Turns the compile cache on in `directory` for every module loaded from now on, unless the
 * folder is unsafe (compile-cache-folder.ts); `codeDir` is the folder the server's code is loaded from.
 */
export function enableCompileCache(
  directory: string | undefined,
  codeDir: string,
  user: CacheUser = currentUser,
): CompileCache {
  if (directory === undefined) return { enabled: false, reason: 'COMPILE_CACHE_DIR is off', refused: false }
  const folder = judgeCacheFolder(directory, codeDir, user)
  if ('refused' in folder) return { enabled: false, reason: folder.refused, refused: true }
  const result = module.enableCompileCache(directory)
  const { ENABLED, ALREADY_ENABLED } = module.constants.compileCacheStatus
  if (result.status === ALREADY_ENABLED)
    return { enabled: false, reason: `NODE_COMPILE_CACHE chose ${result.directory} already; unset it`, refused: true }
  if (result.status !== ENABLED) {
    const message = result.message ?? 'Node did not enable its compile cache'
    // Node keeps a folder per Node version and user inside, which only the fill can make here.
    const hint =
      folder.access === 'read-only'
        ? ` (${directory} was filled for another Node or user: fill it again with scripts/fill-compile-cache.mjs)`
        : ''
    return { enabled: false, reason: `${message}${hint}`, refused: true }
  }
  return { enabled: true, directory, access: folder.access, flush: () => module.flushCompileCache() }
}
