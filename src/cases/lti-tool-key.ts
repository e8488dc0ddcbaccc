/**
 * The tool's LTI key: generated once by whichever instance needs it first (shared settings), and
 * rotated by an operator; a rotated key stays published for RETIRED_KEY_DAYS so that tokens it
 * signed just before still verify at platforms that fetch the key set then.
 */
import type { Kysely } from 'kysely'
import { type Clock, isoAt } from '../clock.js'
import { ConflictError } from '../domain/errors.js'
import { newToolKeyText, type ToolKey, toolKeyFrom } from '../domain/lti-tool-key.js'
import { pruneRetiredToolKeys, replaceToolKey, TOOL_KEY_SETTING } from '../storage/lti-tool-key-repository.js'
import type { Database } from '../storage/tables.js'
import { inTransaction } from '../storage/transaction.js'
import { type OperatorAudit, auditOperator } from './operator-action.js'
import { sharedValue } from './shared-settings.js'

export const RETIRED_KEY_DAYS = 7

/** The key in use, made and stored first if no instance has made one. */
export async function loadToolKey(db: Kysely<Database>): Promise<ToolKey> {
  return toolKeyFrom(await sharedValue(db, TOOL_KEY_SETTING, newToolKeyText()))
}

/**
 * Puts a new key in use; the old one stays published for RETIRED_KEY_DAYS. Audited as
 * `lti.key.rotate` when an operator is given (the command line writes its own row instead).
 */
export async function rotateToolKey(
  db: Kysely<Database>,
  audit: OperatorAudit | undefined,
  clock: Clock,
): Promise<{ retired: string; current: string }> {
  const current = await sharedValue(db, TOOL_KEY_SETTING, newToolKeyText())
  const old = toolKeyFrom(current)
  const nextText = newToolKeyText()
  const next = toolKeyFrom(nextText)
  const now = clock.now()
  await inTransaction(db, async (trx) => {
    await pruneRetiredToolKeys(trx, isoAt(now))
    const until = isoAt(now + RETIRED_KEY_DAYS * 86_400_000)
    const replaced = await replaceToolKey(trx, current, nextText, {
      kid: old.publicJwk.kid,
      n: old.publicJwk.n,
      e: old.publicJwk.e,
      until,
    })
    if (!replaced)
      throw new ConflictError('the LTI tool key was rotated by someone else at the same moment; look again')
    await auditOperator(
      trx,
      audit,
      {
        action: 'lti.key.rotate',
        target: 'lti-tool-key',
        detail: { retired: old.publicJwk.kid, current: next.publicJwk.kid, publishedUntil: until },
      },
      now,
    )
  })
  return { retired: old.publicJwk.kid, current: next.publicJwk.kid }
}
