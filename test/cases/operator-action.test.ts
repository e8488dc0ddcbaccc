/**
 * An audited change and its row are one transaction: the row is written after the change and
 * with it, and a change that fails leaves no row, as a row that cannot be written leaves no change.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { auditAction, auditedChange } from '../../src/cases/operator-action.js'
import { ManualClock } from '../../src/clock.js'
import { createOrganisation, listOrganisations } from '../../src/storage/access-repository.js'
import { listAudit } from '../../src/storage/audit-repository.js'
import type { Storage } from '../../src/storage/connection.js'
import { createTestStorage } from '../helper.js'

describe('the operator audit log', () => {
  let storage: Storage
  const clock = new ManualClock('2026-03-02T09:00:00.000Z')
  beforeEach(async () => {
    storage = await createTestStorage({ catalog: false })
  })
  afterEach(() => storage.close())

  const entry = (target: string) => ({ actor: 'cli:ops', action: 'organisation.create', target })

  it('writes the change and its row together, the row timed after the change', async () => {
    const row = await auditedChange(
      storage.db,
      (trx) => {
        clock.advance(5)
        return createOrganisation(trx, 'Acme', clock.now())
      },
      (organisation) => entry(`organisation:${organisation.id}`),
      { now: () => clock.now() + 1 },
    )
    const [audit] = await listAudit(storage.db)
    expect(audit).toMatchObject({ target: `organisation:${row.id}`, at: new Date(clock.now() + 1).toISOString() })
  })

  it('leaves neither when either fails', async () => {
    await expect(
      auditedChange(
        storage.db,
        () => Promise.reject(new Error('refused')),
        () => entry('x'),
        clock,
      ),
    ).rejects.toThrow('refused')
    await expect(
      auditedChange(
        storage.db,
        (trx) => createOrganisation(trx, 'Acme', clock.now()),
        () => {
          throw new Error('no row')
        },
        clock,
      ),
    ).rejects.toThrow('no row')
    expect(await listOrganisations(storage.db)).toEqual([])
    expect(await listAudit(storage.db)).toEqual([])
  })

  it('records an action that changed nothing', async () => {
    await auditAction(storage.db, { ...entry('report:1'), detail: { students: 3 } }, clock.now())
    const [audit] = await listAudit(storage.db)
    expect(audit).toMatchObject({ target: 'report:1', detail: '{"students":3}' })
  })
})
