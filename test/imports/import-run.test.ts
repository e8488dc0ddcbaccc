import { describe, expect, it } from 'vitest'
import { type ImportSpec, previewImport, runImport, writeImport } from '../../src/imports/import-run.js'
import type { ImportProblem } from '../../src/imports/problems.js'

type Steps = string[]

/** A spec that records each step it is asked for; `problems` says where a problem is found. */
function spec(steps: Steps, problems: { read?: boolean; check?: boolean } = {}) {
  const problem: ImportProblem = { file: 'users.csv', line: 2, field: 'sourcedId', message: 'is required' }
  const format: ImportSpec<string, string, { rows: number }, string, string> = {
    async read() {
      steps.push('read')
      return problems.read ? { ok: false, problems: [problem], more: 0 } : { ok: true, value: 'rows' }
    },
    async open(work) {
      steps.push('open')
      try {
        return await work('session')
      } finally {
        steps.push('close')
      }
    },
    async check(session, source) {
      steps.push(`check ${session} ${source}`)
      return { rows: 3 }
    },
    problems: () => (problems.check ? { problems: [problem], more: 2 } : { problems: [], more: 0 }),
    async preview(_session, _source, checked) {
      steps.push('preview')
      return `${checked.rows} rows to write`
    },
    async write(session, source, checked) {
      steps.push(`write ${session} ${source} ${checked === undefined ? 'unchecked' : 'checked'}`)
      return 'written'
    },
  }
  return format
}

describe('the one import run', () => {
  it('refuses a source with a problem before opening the session, writing nothing', async () => {
    const steps: Steps = []
    const result = await runImport(spec(steps, { read: true }), async () => true)
    expect(result).toMatchObject({ kind: 'refused', more: 0 })
    expect(steps).toEqual(['read'])
  })

  it('refuses what checking found wrong, with what it checked, and neither previews nor writes', async () => {
    const steps: Steps = []
    const result = await runImport(spec(steps, { check: true }), async () => true)
    expect(result).toMatchObject({ kind: 'refused', checked: { rows: 3 }, more: 2 })
    expect(steps).toEqual(['read', 'open', 'check session rows', 'close'])
  })

  it('previews, asks and writes in one session when confirmed', async () => {
    const steps: Steps = []
    const asked: string[] = []
    const result = await runImport(spec(steps), async (preview) => {
      asked.push(preview)
      return true
    })
    expect(asked).toEqual(['3 rows to write'])
    expect(result).toEqual({ kind: 'written', checked: { rows: 3 }, preview: '3 rows to write', outcome: 'written' })
    expect(steps).toEqual(['read', 'open', 'check session rows', 'preview', 'write session rows checked', 'close'])
  })

  it('stops at the preview when not confirmed, and when only previewing', async () => {
    for (const run of [
      (steps: Steps) => runImport(spec(steps), async () => false),
      (steps: Steps) => previewImport(spec(steps)),
    ]) {
      const steps: Steps = []
      expect(await run(steps)).toEqual({ kind: 'previewed', checked: { rows: 3 }, preview: '3 rows to write' })
      expect(steps).toEqual(['read', 'open', 'check session rows', 'preview', 'close'])
    }
  })

  it('writes without a preview when no one is asked', async () => {
    const steps: Steps = []
    expect(await runImport(spec(steps))).toEqual({ kind: 'written', checked: { rows: 3 }, outcome: 'written' })
    expect(steps).toEqual(['read', 'open', 'check session rows', 'write session rows checked', 'close'])
  })

  it('writes a preview confirmed earlier without checking again, its write checking itself', async () => {
    const steps: Steps = []
    expect(await writeImport(spec(steps))).toEqual({ ok: true, outcome: 'written' })
    expect(steps).toEqual(['read', 'open', 'write session rows unchecked', 'close'])
    const refused: Steps = []
    expect(await writeImport(spec(refused, { read: true }))).toMatchObject({ ok: false, more: 0 })
    expect(refused).toEqual(['read'])
  })
})
