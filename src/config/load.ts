/**
 * Reads the environment once through the schema: each setting's variable is parsed by the setting's
 * type and checked against its range there, and a few settings that depend on others are derived here.
 * It reads the schema's keywords itself rather than load TypeBox's checker: server-entry.ts loads
 * this before Node's compile cache is on.
 */
import path from 'node:path'
import { type Config, SETTINGS, type Setting } from './schema.js'

export class ConfigError extends Error {
  override name = 'ConfigError'
}

export type Env = Readonly<Record<string, string | undefined>>
type Notes = Setting['schema']
type Draft = { -readonly [K in keyof Config]?: Config[K] }

/** The variable's text, trimmed; blank counts as unset. */
function given(env: Env, name: string): string | undefined {
  const raw = env[name]?.trim()
  return raw === '' ? undefined : raw
}

function integer(env: Env, s: Notes): number {
  const unit = s.unit ?? 1
  const raw = env[s.env]
  if (raw === undefined || raw.trim() === '') return Number(s.envDefault) * unit
  const value = Number(raw)
  const [min, max] = [(s.minimum as number) / unit, (s.maximum as number) / unit]
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${s.env} must be an integer from ${min} to ${max} (got "${raw}")`)
  }
  return value * unit
}

function boolean(env: Env, s: Notes): boolean {
  const raw = (env[s.env]?.trim() || s.envDefault)?.toLowerCase()
  if (raw !== undefined && ['1', 'true', 'yes', 'on'].includes(raw)) return true
  if (raw !== undefined && ['0', 'false', 'no', 'off'].includes(raw)) return false
  throw new ConfigError(`${s.env} must be true or false (got "${env[s.env]}")`)
}

function oneOf(env: Env, s: Notes, allowed: readonly string[]): string {
  const raw = given(env, s.env) ?? (s.envDefault as string)
  const match = allowed.find((value) => value.toLowerCase() === raw.toLowerCase())
  if (match === undefined) throw new ConfigError(`${s.env} must be one of ${allowed.join(', ')} (got "${raw}")`)
  return match
}

const text = (env: Env, s: Notes): string | undefined => given(env, s.env) ?? s.envDefault

/** Reads a setting by its schema's type alone. */
function byType(env: Env, s: Notes): Config[keyof Config] {
  if (Array.isArray(s.enum)) return oneOf(env, s, s.enum as string[]) as Config['logLevel']
  if (s.type === 'integer') return integer(env, s)
  if (s.type === 'boolean') return boolean(env, s)
  return text(env, s)
}

/** URLs may carry a password; it never reaches an error message or a log. */
const masked = (url: string) => url.replace(/\/\/[^@]*@/, '//***@')

/** At least 32 characters: a scrape token guards what the service is doing, and is never typed by hand. */
const MIN_METRICS_TOKEN = 32

type Reader = (env: Env, s: Notes, done: Draft) => Config[keyof Config]

/** One mailbox; a host without a dot is allowed, as in the default `no-reply@localhost`. */
const SENDER = /^[^\s@<>(),;:"\\[\]]+@[^\s@<>(),;:"\\[\]]+$/

/** Settings whose variable needs more than its type says: a format, a path, or another setting. */
const READERS: Partial<Record<keyof Config, Reader>> = {
  metricsToken: (env, s) => {
    const raw = given(env, s.env)
    if (raw !== undefined && (raw.length < MIN_METRICS_TOKEN || !/^[\x21-\x7e]+$/.test(raw)))
      throw new ConfigError(
        `${s.env} must be at least ${MIN_METRICS_TOKEN} printable characters without spaces (openssl rand -hex 32)`,
      )
    return raw
  },
  metricsPort: (env, s, done) => {
    if (given(env, s.env) === undefined) return undefined
    const value = integer(env, { ...(s.anyOf as Notes[])[0]!, env: s.env, envDefault: '0' })
    if (value === done.port && done.port !== 0) throw new ConfigError(`${s.env} must differ from PORT (both ${value})`)
    return value
  },
  publicUrl: (env, s, done) => {
    const raw = given(env, s.env)
    if (raw === undefined) return `http://localhost:${done.port}`
    if (!/^https?:\/\/[^\s/]+(\/[^\s]*)?$/.test(raw))
      throw new ConfigError(`${s.env} must be an http(s) URL (got "${raw}")`)
    return raw.replace(/\/+$/, '')
  },
  databaseUrl: (env, s) => {
    const raw = text(env, s)!
    if (/^(sqlite|file):/.test(raw) || /^postgres(ql)?:\/\//.test(raw)) return raw
    throw new ConfigError(`${s.env} must start with sqlite:, file: or postgres:// (got "${masked(raw)}")`)
  },
  trustProxy: (env, s) => {
    const raw = text(env, s)!
    if (raw === 'false') return false
    if (raw === 'true') return true
    return /^\d+$/.test(raw) ? Number(raw) : raw
  },
  catalogDir: (env, s) => path.resolve(text(env, s)!),
  rosterUploadDir: (env, s) => path.resolve(text(env, s)!),
  redisUrl: (env, s) => {
    const raw = given(env, s.env)
    if (raw !== undefined && !/^rediss?:\/\//.test(raw))
      throw new ConfigError(`${s.env} must start with redis:// or rediss:// (got "${masked(raw)}")`)
    return raw
  },
  smtpUrl: (env, s) => {
    const raw = given(env, s.env)
    if (raw !== undefined && !/^smtps?:\/\/[^\s/]+/.test(raw))
      throw new ConfigError(`${s.env} must start with smtp:// or smtps:// and name a host (got "${masked(raw)}")`)
    return raw
  },
  mailFrom: (env, s) => {
    const raw = text(env, s)!
    const address = (/^[^<>]*<([^<>]+)>$/.exec(raw)?.[1] ?? raw).trim()
    if (!SENDER.test(address) || /\p{Cc}/u.test(raw))
      throw new ConfigError(`${s.env} must be an address, or a name and an address in <> (got "${raw}")`)
    return raw
  },
  workers: (env, s) => {
    const count = integer(env, s)
    if (count > 1 && given(env, 'REDIS_URL') === undefined)
      throw new ConfigError(
        `${s.env}=${count} needs REDIS_URL: without a shared store each worker would keep its own rate limit`,
      )
    return count
  },
  compileCacheDir: (env, s) => {
    const raw = text(env, s)!
    return raw === 'off' ? undefined : path.resolve(raw)
  },
  tracing: (env, s) => given(env, s.env) !== undefined,
  metrics: (env, s, done) =>
    oneOf(env, s, s.envValues as string[]) === 'auto' &&
    (done.metricsToken !== undefined || done.metricsPort !== undefined),
}

export function loadConfig(env: Env = process.env): Config {
  const done: Draft = {}
  const draft = done as Record<keyof Config, unknown>
  for (const { key, schema } of SETTINGS) draft[key] = (READERS[key] ?? byType)(env, schema, done)
  return Object.freeze(done as Config)
}
