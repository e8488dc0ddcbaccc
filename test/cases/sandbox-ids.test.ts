/**
 * A sandbox student and a real child never share an id, whichever is written first: sandbox
 * creation skips ids real students have, and student writes never change a sandbox row.
 */
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createSandbox } from '../../src/cases/sandbox.js'
import { sandboxStudents } from '../../src/storage/sandbox-repository.js'
import { upsertStudents } from '../../src/storage/student-import-repository.js'
import { createTestStorage, START, STUDENTS } from '../helper.js'
import { perTest } from '../support/built.js'

describe('sandbox student ids', () => {
  const storage = perTest(() => createTestStorage())

  const student = (id: string) =>
    storage.db
      .selectFrom('students')
      .select(['id', 'first_name', 'tier', 'sandbox'])
      .where('id', '=', id)
      .executeTakeFirst()

  it('sandbox creation never takes the id of a real student', async () => {
    await upsertStudents(storage.db, [{ id: STUDENTS.ada, firstName: 'Ada', tier: 'explorer' }], START)
    // The id source offers the real child's id first (and again), as a colliding generator would.
    const fresh = Array.from({ length: 8 }, () => randomUUID())
    const offered = [STUDENTS.ada, fresh[0]!, STUDENTS.ada, ...fresh.slice(1)]
    const sandbox = await createSandbox(storage.db, 'partner@example.org', START, () => offered.shift()!)

    const synthetic = await sandboxStudents(storage.db, sandbox.id)
    expect(synthetic.map((s) => s.id).sort()).toEqual([...fresh].sort())
    expect(await student(STUDENTS.ada)).toEqual({ id: STUDENTS.ada, first_name: 'Ada', tier: 'explorer', sandbox: 0 })
  })

  it('a student write with a sandbox student id leaves the sandbox row as it was', async () => {
    const sandbox = await createSandbox(storage.db, 'partner@example.org', START)
    const [synthetic] = await sandboxStudents(storage.db, sandbox.id)
    const before = await student(synthetic!.id)
    await upsertStudents(
      storage.db,
      [{ id: synthetic!.id, firstName: 'Realname', tier: before!.tier === 'builder' ? 'explorer' : 'builder' }],
      START + 1000,
    )
    expect(await student(synthetic!.id)).toEqual(before)
  })
})
