/**
 * The one run every import takes, whatever its format: read the source, checking each row by
 * itself; check what was read against the stored data; work out what writing would change (the
 * preview); then stop there or write. A format is an ImportSpec, passed in by the caller: the
 * CSV and JSON Lines imports (record-import.ts) and the OneRoster import (cases/roster-import/import.ts).
 *
 * Nothing is written when reading or checking found any problem: an operator fixes a whole file
 * in one pass instead of one error per run. Checking and writing share one session the spec
 * opens (a database connection), while reading happens before it, so a file that cannot be read
 * is reported without a database at all.
 */
import type { ImportProblem } from './problems.js'

/** The problems found, capped (ProblemList): `more` counts those left out. */
export interface FoundProblems {
  problems: readonly ImportProblem[]
  more: number
}

export type Read<T> = { ok: true; value: T } | ({ ok: false } & FoundProblems)

export interface ImportSpec<Session, Source, Checked, Preview, Outcome> {
  /** Reads the source, checking each row by itself; writes nothing. */
  read(): Promise<Read<Source>>
  /** Opens what checking and writing need, around both. */
  open<T>(work: (session: Session) => Promise<T>): Promise<T>
  /** Checks the rows against each other and the stored data; writes nothing. */
  check(session: Session, source: Source): Promise<Checked>
  /** The problems `check` found; none lets the run go on. */
  problems(checked: Checked): FoundProblems
  /** What writing would change, for the caller to show or ask about; writes nothing. */
  preview(session: Session, source: Source, checked: Checked): Promise<Preview>
  /**
   * Writes: in one transaction, or batch by batch (import-batches.ts). Without `checked`, the
   * preview was confirmed by an earlier request and the write checks again itself.
   */
  write(session: Session, source: Source, checked?: Checked): Promise<Outcome>
}

export type ImportResult<Checked, Preview, Outcome> =
  | ({ kind: 'refused'; checked?: Checked } & FoundProblems)
  /** Checked and previewed; not written (a preview only, or the caller said no). */
  | { kind: 'previewed'; checked: Checked; preview: Preview }
  | { kind: 'written'; checked: Checked; preview?: Preview; outcome: Outcome }

/**
 * read → check → preview → write. With `confirm`, the preview is made and `confirm` says whether
 * to write; without it the run writes once the checks pass, with no preview.
 *
 * @example
 * const result = await runImport(spec, async (preview) => ask(preview))
 * if (result.kind === 'refused') report(result.problems)
 */
export async function runImport<Session, Source, Checked, Preview, Outcome>(
  spec: ImportSpec<Session, Source, Checked, Preview, Outcome>,
  confirm?: (preview: Preview, checked: Checked) => Promise<boolean>,
): Promise<ImportResult<Checked, Preview, Outcome>> {
  const source = await spec.read()
  if (!source.ok) return { kind: 'refused', problems: source.problems, more: source.more }
  return spec.open(async (session) => {
    const checked = await spec.check(session, source.value)
    const found = spec.problems(checked)
    if (found.problems.length > 0 || found.more > 0) return { kind: 'refused', checked, ...found }
    if (confirm === undefined)
      return { kind: 'written', checked, outcome: await spec.write(session, source.value, checked) }
    const preview = await spec.preview(session, source.value, checked)
    if (!(await confirm(preview, checked))) return { kind: 'previewed', checked, preview }
    return { kind: 'written', checked, preview, outcome: await spec.write(session, source.value, checked) }
  })
}

/** read → check → preview, writing nothing. */
export function previewImport<Session, Source, Checked, Preview, Outcome>(
  spec: ImportSpec<Session, Source, Checked, Preview, Outcome>,
): Promise<ImportResult<Checked, Preview, Outcome>> {
  return runImport(spec, async () => false)
}

/** read → write, for a preview an earlier request showed and the operator confirmed. */
export async function writeImport<Session, Source, Checked, Preview, Outcome>(
  spec: ImportSpec<Session, Source, Checked, Preview, Outcome>,
): Promise<{ ok: true; outcome: Outcome } | ({ ok: false } & FoundProblems)> {
  const source = await spec.read()
  if (!source.ok) return source
  return { ok: true, outcome: await spec.open((session) => spec.write(session, source.value)) }
}
