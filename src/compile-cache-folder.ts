/**
 * Whether a folder may hold Node's compile cache, and how the server may use it. The cache holds
 * code that V8 runs, guarded only by CRC-32s anyone can recompute, so a folder is used only where
 * nobody but the service's user, or nobody but someone above it, can have written its contents:
 *
 * - read-write: a real directory owned by the service's user and writable by no one else, as
 *   OpenSSH's StrictModes asks of a user's keys. Node fills it as the server runs; whoever runs
 *   code as the service's user can plant code there too.
 * - read-only: a real directory the service's user can read but neither write nor replace: it,
 *   everything in it and every folder above it belong to another user (root) and give the
 *   service's user no write permission. It is filled beforehand as that user and then handed to
 *   root (scripts/fill-compile-cache.mjs), and the server only reads it.
 *
 * Never inside the folder the code is loaded from, so that the service writes nothing there.
 */
import fs from 'node:fs'
import path from 'node:path'

/** Who the server runs as; a test passes someone else. `uid` is undefined where there are no uids. */
export interface CacheUser {
  uid: number | undefined
  gids: readonly number[]
}

export type CacheFolder = { readonly access: 'read-write' | 'read-only' } | { readonly refused: string }

const STICKY = 0o1000

/** Whether `user` can write into (or change the mode of) what `stat` describes. */
function writable(stat: fs.Stats, user: CacheUser): boolean {
  if (user.uid === 0 || stat.uid === user.uid) return true
  return (stat.mode & (user.gids.includes(stat.gid) ? 0o020 : 0o002)) !== 0
}

/** Whether `user` can read a file, or list and enter a folder. */
function readable(stat: fs.Stats, user: CacheUser): boolean {
  if (user.uid === 0) return true
  const [read, enter] =
    stat.uid === user.uid ? [0o400, 0o100] : user.gids.includes(stat.gid) ? [0o040, 0o010] : [0o004, 0o001]
  return (stat.mode & read) !== 0 && (!stat.isDirectory() || (stat.mode & enter) !== 0)
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

/**
 * How `directory` may hold the cache, or why it must not; creates it (0700, read-write) when
 * absent. `codeDir` is the folder the server's code is loaded from.
 */
export function judgeCacheFolder(directory: string, codeDir: string, user: CacheUser): CacheFolder {
  // Checked before anything is created, so that nothing is ever written beside the code.
  if (isInside(realLocation(directory), realLocation(codeDir)))
    return { refused: `${directory} is inside the folder the code is loaded from (${codeDir})` }
  if (!fs.existsSync(directory)) {
    try {
      fs.mkdirSync(directory, { recursive: true, mode: 0o700 })
    } catch (error) {
      return { refused: `${directory} cannot be created (${(error as NodeJS.ErrnoException).code ?? String(error)})` }
    }
  }
  const stat = fs.lstatSync(directory)
  if (stat.isSymbolicLink()) return { refused: `${directory} is a symbolic link; name the directory itself` }
  if (!stat.isDirectory()) return { refused: `${directory} is not a directory` }
  if (user.uid === undefined || stat.uid === user.uid) {
    if ((stat.mode & 0o022) !== 0) return { refused: `${directory} is writable by other users; chmod go-w it` }
    return { access: 'read-write' }
  }
  const unsafe = whyNotReadOnly(directory, stat, user)
  return unsafe === undefined ? { access: 'read-only' } : { refused: unsafe }
}

/** Why a folder of another user's is not one the service's user can only read, if it is not. */
function whyNotReadOnly(directory: string, stat: fs.Stats, user: CacheUser): string | undefined {
  const owner = `belongs to another user (uid ${stat.uid})`
  if (writable(stat, user)) return `${directory} ${owner} but the service's user can write to it; chmod go-w it`
  if (!readable(stat, user)) return `${directory} ${owner} and the service's user cannot read it`
  let entries: fs.Dirent[]
  try {
    entries = fs.readdirSync(directory, { recursive: true, withFileTypes: true })
  } catch (error) {
    return `${directory} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`
  }
  for (const entry of entries) {
    const file = path.join(entry.parentPath, entry.name)
    const inside = fs.lstatSync(file)
    if (inside.isSymbolicLink()) return `${directory} holds a symbolic link (${file})`
    if (writable(inside, user))
      return (
        `${directory} holds ${file}, which the service's user can write: ` +
        'fill the cache again with scripts/fill-compile-cache.mjs'
      )
    if (!readable(inside, user)) return `${directory} holds ${file}, which the service's user cannot read`
  }
  // A folder above that the service's user can write lets it put a folder of its own in this one's place.
  let child = realLocation(directory)
  let childOwner = stat.uid
  for (let parent = path.dirname(child); parent !== child; child = parent, parent = path.dirname(parent)) {
    const above = fs.statSync(parent)
    // In a sticky folder (/tmp) only an entry's owner, or the folder's, may rename it.
    const guarded = (above.mode & STICKY) !== 0 && above.uid !== user.uid && childOwner !== user.uid
    if (writable(above, user) && !guarded)
      return `${parent} is writable by the service's user, which could replace ${directory} with a folder of its own`
    childOwner = above.uid
  }
  return undefined
}
