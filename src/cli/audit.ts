/**
 * The operator audit log as the command line writes it. A command that changes something names
 * its action where it is defined (`defineCommand(..., { audit })`), and `act` hands it an Audit
 * that writes one row: who ran it (`cli:<name>`), the command and its arguments with secrets
 * masked, and what it changed. Read-only commands get no Audit to write with.
 */
import os from 'node:os'
import { type Command, InvalidArgumentError, type Option } from 'commander'
import type { Kysely } from 'kysely'
import { systemClock } from '../clock.js'
import type { AuditEntry } from '../storage/audit-repository.js'
import type { Database } from '../storage/tables.js'
import { type Session, withStorage } from './storage-session.js'

/** What a change's storage work returns: its result, and what the audit row says it did. */
export interface AuditedChange<T> {
  value: T
  /** What it was done to, e.g. `organisation:<id>`. */
  target: string
  changed: Record<string, unknown>
}

/** The session a change runs in: `db` is its transaction. */
export type ChangeSession = Omit<Session, 'storage'> & { db: Kysely<Database> }

export interface Audit {
  /** Who the row names, `cli:<name>`: also what a share the command makes records as its maker. */
  readonly actor: string
  /** Opens the database and runs `work` in one transaction with the audit row. */
  change<T>(work: (session: ChangeSession) => Promise<AuditedChange<T>>): Promise<T>
  /** Writes the row with `db` (the caller's transaction), for a change that spans transactions: an import. */
  record(db: Kysely<Database>, target: string, changed: Record<string, unknown>): Promise<void>
}

const actions = new WeakMap<Command, string>()

/** Declares `command` a changing command that records `action`; adds --actor. */
export function markAudited(command: Command, action: string): void {
  actions.set(command, action)
  command.option(
    '--actor <name>',
    'who to name in the audit log instead of the operating-system user (for automation, or a shared account)',
    actorOption,
  )
}

/** The action a command records, or undefined for a read-only command. */
export function auditedAction(command: Command): string | undefined {
  return actions.get(command)
}

function actorOption(text: string): string {
  const name = text.trim()
  // Control characters would let a name forge lines in a terminal or a log.
  if (name === '' || name.length > 100 || /\p{Cc}/u.test(name))
    throw new InvalidArgumentError('expected a name of 1 to 100 printable characters.')
  return name
}

/**
 * The operating-system user running the command. A uid without an entry in the user database
 * (an arbitrary container uid) makes `userInfo` throw; its number is the truth then, not $USER.
 */
export function osUser(
  system: Pick<typeof os, 'userInfo'> & Pick<typeof process, 'getuid'> = {
    userInfo: os.userInfo,
    getuid: process.getuid,
  },
): string {
  try {
    const name = system.userInfo().username
    if (name !== '') return name
  } catch {}
  const uid = system.getuid?.()
  return uid === undefined ? 'unknown' : `uid:${uid}`
}

/**
 * Who the audit log names: --actor when given; otherwise the user who ran `sudo` (SUDO_USER),
 * because under `sudo -u <service user>` the operating-system user is the service account and
 * says nothing about the person; otherwise the operating-system user. Neither --actor nor an
 * environment variable proves anything, so the row always keeps `osUser` beside the name.
 */
export function actorName(explicit: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  if (explicit !== undefined) return explicit
  const sudoUser = env.SUDO_USER?.trim()
  return sudoUser ? sudoUser : osUser()
}

/** `org suspend` for the command `curriculum org suspend`. */
export function commandPath(command: Command): string[] {
  const path: string[] = []
  for (let at: Command | null = command; at?.parent; at = at.parent) path.unshift(at.name())
  return path
}

const API_KEY = /cur_(?:live|test)_[0-9A-Za-z]{38}/g
const SECRET_OPTION = /password|secret|token/i

/**
 * The command line after the command's own words, as typed, with the value of any option named
 * for a password, secret or token masked. Passwords never reach the command line (operator
 * create reads them from standard input); `maskKeys` masks a key pasted into any argument.
 */
export function auditedArguments(command: Command, argv: readonly string[]): string[] {
  const options: Option[] = []
  for (let at: Command | null = command; at !== null; at = at.parent) options.push(...at.options)
  const byFlag = new Map<string, Option>()
  for (const option of options) {
    if (option.long !== undefined) byFlag.set(option.long, option)
    if (option.short !== undefined) byFlag.set(option.short, option)
  }
  const secret = (option: Option | undefined) =>
    option !== undefined && !option.isBoolean() && SECRET_OPTION.test(option.long ?? '')

  const rest = [...argv]
  // Drop the command's own words (the first occurrence of each, in order).
  let from = 0
  for (const word of commandPath(command)) {
    const at = rest.indexOf(word, from)
    if (at !== -1) {
      rest.splice(at, 1)
      from = at
    }
  }
  const out: string[] = []
  for (let i = 0; i < rest.length; i++) {
    const token = rest[i]!
    const equals = token.startsWith('--') ? token.indexOf('=') : -1
    if (equals !== -1 && secret(byFlag.get(token.slice(0, equals)))) {
      out.push(`${token.slice(0, equals)}=[redacted]`)
    } else if (secret(byFlag.get(token)) && i + 1 < rest.length) {
      out.push(token, '[redacted]')
      i++
    } else {
      out.push(token)
    }
  }
  return out
}

/** `value` with anything shaped like an API key masked, e.g. a key pasted by mistake as a key's name. */
export function maskKeys(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(API_KEY, '[redacted API key]')
  if (Array.isArray(value)) return value.map(maskKeys)
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, maskKeys(item)]))
  return value
}

/** Who the audit log names for `command`: `cli:` and the actor's name. */
export function cliActor(command: Command, env: NodeJS.ProcessEnv = process.env): string {
  return maskKeys(`cli:${actorName(command.opts<{ actor?: string }>().actor, env)}`) as string
}

/** The audit row of `action` on `target` run as `command`. */
export function auditEntry(
  command: Command,
  action: string,
  target: string,
  changed: Record<string, unknown>,
  argv: readonly string[] = process.argv.slice(2),
  env: NodeJS.ProcessEnv = process.env,
): AuditEntry {
  return {
    actor: cliActor(command, env),
    action,
    target,
    detail: maskKeys({
      command: commandPath(command).join(' '),
      arguments: auditedArguments(command, argv),
      osUser: osUser(),
      changed,
    }) as Record<string, unknown>,
  }
}

/** The Audit `act` hands a command: one that writes rows if the command was declared changing. */
export function auditFor(command: Command): Audit {
  const action = auditedAction(command)
  if (action === undefined) {
    const refuse = (): never => {
      throw new Error(`"${commandPath(command).join(' ')}" is read-only: declare it with { audit } to change anything`)
    }
    return {
      get actor(): string {
        return refuse()
      },
      change: refuse,
      record: refuse,
    }
  }
  const entry = ({ target, changed }: Omit<AuditedChange<unknown>, 'value'>) =>
    auditEntry(command, action, target, changed)
  return {
    actor: cliActor(command),
    record: async (db, target, changed) => {
      const { auditAction } = await import('../cases/operator-action.js')
      await auditAction(db, entry({ target, changed }), systemClock.now())
    },
    change: (work) =>
      withStorage(async ({ storage, ...session }) => {
        const { auditedChange } = await import('../cases/operator-action.js')
        const done = await auditedChange(storage.db, (db) => work({ ...session, db }), entry, systemClock)
        return done.value
      }),
  }
}
