/**
 * What the under-load benchmarks (import, erase, roster import) share: a partner organisation
 * with an agreement in force and a key, and the built server of the checkout under test with
 * every rate limit lifted, so that each read they time is the service's answer, not a 429.
 */
import path from 'node:path'
import { startServer } from './server-process.mjs'

/** A partner organisation of `root`'s build with an agreement in force and a live key of `scopes`. */
export async function partnerWithKey(root, db, { name, scopes, now }) {
  const { createOrganisation, createApiKey } = await import(path.join(root, 'dist/storage/access-repository.js'))
  const { recordAgreement } = await import(path.join(root, 'dist/cases/agreement-record.js'))
  const organisation = await createOrganisation(db, name, now)
  await recordAgreement(
    db,
    { organisationId: organisation.id, signedAt: now - 1000, expiresAt: now + 86_400_000, documentRef: 'DSA' },
    now,
  )
  const { key } = await createApiKey(db, { organisationId: organisation.id, name: 'k', scopes, expiresAt: null }, now)
  return { organisation, key }
}

/** `root`'s built server on `url`, the limits lifted; `env` adds or overrides settings. */
export function startUnlimitedServer(root, url, env = {}) {
  return startServer({
    label: 'server',
    script: path.join(root, 'dist/server.js'),
    env: {
      ...process.env,
      DATABASE_URL: url,
      HOST: '127.0.0.1',
      SEED_DEMO: 'false',
      RATE_LIMIT: '1000000',
      ORGANISATION_RATE_LIMIT: '1000000',
      ...env,
    },
  })
}
