/** `curriculum links shares`: an organisation's shares, made and ended, and how many students it has linked. */
import type { Command } from 'commander'
import { act } from '../../command-action.js'
import { ORG_NAMED, defineCommand } from '../../options.js'
import { type CommandResult, plural, tableOf } from '../../output.js'
import { withStorage } from '../../storage-session.js'
import { named, organisationJson } from './views.js'

export function defineLinksShares(links: Command): void {
  defineCommand(links, 'shares', "List an organisation's shares: kind, label, students held, when made and ended", [
    'curriculum links shares --org "Acme Learning"',
    'curriculum links shares --org "Acme Learning" --json',
  ])
    .requiredOption(...ORG_NAMED)
    .action(act(listShares))
}

async function listShares(command: Command): Promise<CommandResult> {
  const { org } = command.opts<{ org: string }>()
  const { organisation, shares, linked } = await withStorage(async ({ storage }) => {
    const [{ findOrganisation }, { listShares, countLinked }] = await Promise.all([
      import('../../../storage/access-repository.js'),
      import('../../../storage/share-listing-repository.js'),
    ])
    const organisation = await findOrganisation(storage.db, org)
    return {
      organisation,
      shares: await listShares(storage.db, organisation.id),
      linked: await countLinked(storage.db, organisation.id),
    }
  })
  return {
    data: { organisation: organisationJson(organisation), linked, shares },
    text: [
      `${named(organisation)}: ${plural(linked, 'student')} linked`,
      ...tableOf('no shares', ['ID', 'KIND', 'LABEL', 'STUDENTS', 'CREATED', 'ENDED'], shares, (s) => [
        s.id,
        s.kind,
        s.label,
        String(s.students),
        s.createdAt,
        s.endedAt,
      ]),
    ],
  }
}
