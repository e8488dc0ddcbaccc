/**
 * The schema in src/config/schema.ts is the one list of settings: the Config type is derived from it,
 * and these checks fail when the loader or the table in docs/configuration.md has drifted from it.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { Static } from 'typebox'
import { Value } from 'typebox/value'
import { describe, expect, expectTypeOf, it } from 'vitest'
import { type Config, ConfigError, loadConfig } from '../../src/config.js'
import { ConfigSchema, SETTINGS } from '../../src/config/schema.js'

const DOCS = path.resolve(import.meta.dirname, '../../docs/configuration.md')

/** Variable and Default of each row of the first table, the service's own settings (Traces has its own). */
function documentedRows(): [string, string][] {
  const text = fs.readFileSync(DOCS, 'utf8')
  const table = text.slice(text.indexOf('| Variable'), text.indexOf('\n## '))
  return [...table.matchAll(/^\| `([A-Z0-9_]+)` \| (.+?) \|/gm)].map((row) => [row[1]!, row[2]!])
}

const unquoted = (cell: string) => cell.replace(/^`(.*)`$/, '$1')

describe('the settings schema', () => {
  it('is where the Config type comes from', () => {
    expectTypeOf<keyof Config>().toEqualTypeOf<keyof Static<typeof ConfigSchema>>()
  })

  it('gives every setting its own variable and one line of meaning', () => {
    const names = SETTINGS.map((setting) => setting.schema.env)
    expect(new Set(names).size).toBe(names.length)
    for (const { key, schema } of SETTINGS) {
      expect(schema.env, key).toMatch(/^[A-Z][A-Z0-9_]*$/)
      expect(schema.description, key).toMatch(/^[^\n]+$/)
    }
  })

  it('matches the table of docs/configuration.md, variable for variable and default for default', () => {
    const documented = documentedRows().map(([name, cell]) => [name, unquoted(cell)])
    const declared = SETTINGS.map(({ schema }) => [schema.env, schema.envDefault ?? '(none)'])
    expect(documented.toSorted()).toEqual(declared.toSorted())
  })

  it('is read whole by the loader, and nothing else is', () => {
    const config = loadConfig({})
    expect(Object.keys(config).toSorted()).toEqual(Object.keys(ConfigSchema.properties).toSorted())
    expect(Object.isFrozen(config)).toBe(true)
  })

  it('types what the loader returns, unset or set', () => {
    const everything = {
      ...Object.fromEntries(
        SETTINGS.flatMap(({ schema }) => (schema.envDefault ? [[schema.env, schema.envDefault]] : [])),
      ),
      PUBLIC_URL: 'https://curriculum.example.org/',
      TRUST_PROXY: '2',
      REDIS_URL: 'redis://127.0.0.1:6379',
      WORKERS: '4',
      METRICS_TOKEN: 'a'.repeat(32),
      METRICS_PORT: '9464',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
    }
    for (const env of [{}, everything]) expect(Value.Errors(ConfigSchema, loadConfig(env))).toEqual([])
  })

  it("has each setting's variable read by the loader: refused by name, or changing its setting", () => {
    const defaults = loadConfig({})
    for (const { key, schema } of SETTINGS) {
      let outcome: string
      try {
        outcome = loadConfig({ [schema.env]: 'not valid ☃' })[key] === defaults[key] ? 'ignored' : 'read'
      } catch (error) {
        outcome = error instanceof ConfigError && error.message.startsWith(schema.env) ? 'read' : String(error)
      }
      expect(outcome, schema.env).toBe('read')
    }
  })
})
