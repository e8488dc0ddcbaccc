/**
 * Writing a database file so that its name never points at a half-written file: the bytes go
 * into a temporary file in the same folder, are flushed to the disk, and the finished file is
 * renamed into place (a rename within one file system is atomic), then the folder is flushed so
 * that the rename itself survives a power cut.
 */
import fs from 'node:fs'
import path from 'node:path'

/** The temporary file beside `file` that a command of this process writes before renaming it. */
export function temporaryBeside(file: string, purpose: 'backup' | 'restore'): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.${purpose}-${process.pid}.tmp`)
}

/**
 * Creates `file`, empty, readable and writable by its owner alone: backups and databases hold
 * children's data. Fails if it exists.
 */
export function createPrivateFile(file: string): void {
  const fd = fs.openSync(file, 'wx', 0o600)
  try {
    // A umask can only take bits away; set exactly 0600 all the same, whatever the umask did.
    fs.fchmodSync(fd, 0o600)
  } finally {
    fs.closeSync(fd)
  }
}

export function flushFile(file: string): void {
  const fd = fs.openSync(file, 'r+')
  try {
    fs.fsyncSync(fd)
  } finally {
    fs.closeSync(fd)
  }
}

function flushFolder(folder: string): void {
  const fd = fs.openSync(folder, 'r')
  try {
    fs.fsyncSync(fd)
  } finally {
    fs.closeSync(fd)
  }
}

/**
 * Gives the flushed `temporary` the name `file`. Unless `replace`, fails with EEXIST when `file`
 * exists, even if it appeared meanwhile: a hard link never replaces a name.
 */
export function publish(temporary: string, file: string, replace: boolean): void {
  if (replace) {
    fs.renameSync(temporary, file)
  } else {
    try {
      fs.linkSync(temporary, file)
      fs.unlinkSync(temporary)
    } catch (error) {
      // A file system without hard links: check, then rename (a name appearing in between is replaced).
      if ((error as NodeJS.ErrnoException).code === 'EEXIST' || fs.existsSync(file)) throw error
      fs.renameSync(temporary, file)
    }
  }
  flushFolder(path.dirname(path.resolve(file)))
}

/** Removes what a failed command left, ignoring what is not there. */
export function removeFiles(...files: string[]): void {
  for (const file of files) fs.rmSync(file, { force: true })
}
