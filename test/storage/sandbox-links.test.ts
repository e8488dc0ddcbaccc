/**
 * A sandbox holds synthetic students only, and a partner real ones: `linkStudents` refuses a
 * link across, writing nothing of the batch, whoever calls it (the import refuses such rows
 * with their line before it gets here).
 */
import { describe, expect, it } from 'vitest'
import { createSandbox } from '../../src/cases/sandbox.js'
import { createOrganisation } from '../../src/storage/access-repository.js'
import { lessonSlugs } from '../../src/storage/catalog-repository.js'
import { sandboxStudents } from '../../src/storage/sandbox-repository.js'
import { linkStudents, upsertStudents } from '../../src/storage/student-import-repository.js'
import { createTestStorage, loadSampleCatalog, START, STUDENTS } from '../helper.js'
import { perTest } from '../support/built.js'

describe('links between students and organisations', () => {
  const storage = perTest(() => createTestStorage())

  const links = (organisationId: string) =>
    storage.db
      .selectFrom('student_organisations')
      .select('student_id')
      .where('organisation_id', '=', organisationId)
      .orderBy('student_id')
      .execute()

  it('refuses a real student in a sandbox and a sandbox student in a partner organisation, writing nothing', async () => {
    await upsertStudents(storage.db, [{ id: STUDENTS.ada, firstName: 'Ada', tier: 'explorer' }], START)
    const acme = await createOrganisation(storage.db, 'Acme Learning', START)
    const sandbox = await createSandbox(storage.db, 'partner@example.org', START)
    const [synthetic] = await sandboxStudents(storage.db, sandbox.id)
    const sandboxLinks = await links(sandbox.id)

    await expect(
      linkStudents(
        storage.db,
        [
          { studentId: STUDENTS.ada, organisationId: acme.id },
          { studentId: STUDENTS.ada, organisationId: sandbox.id },
        ],
        START,
      ),
    ).rejects.toThrow(`organisation ${sandbox.id} is a sandbox, which holds synthetic students only`)
    await expect(
      linkStudents(storage.db, [{ studentId: synthetic!.id, organisationId: acme.id }], START),
    ).rejects.toThrow(`student ${synthetic!.id} is a sandbox (synthetic) student`)
    expect(await links(acme.id)).toEqual([])
    expect(await links(sandbox.id)).toEqual(sandboxLinks)

    // Each kind with its own: both are written.
    await linkStudents(storage.db, [{ studentId: STUDENTS.ada, organisationId: acme.id }], START)
    expect(await links(acme.id)).toEqual([{ student_id: STUDENTS.ada }])
  })

  it('lists the stored catalog’s lesson slugs, which the progress import checks rows against', async () => {
    expect([...(await lessonSlugs(storage.db))].sort()).toEqual(
      loadSampleCatalog()
        .lessons.map((lesson) => lesson.slug)
        .sort(),
    )
  })
})
