/**
 * One KeyOrganisation object per organisation (and state) for all the cached keys that belong
 * to it: a hundred keys of one organisation hold one id and one list of agreement windows, not
 * a hundred copies.
 */
import type { AgreementWindow } from '../domain/agreements.js'
import type { KeyOrganisation } from '../domain/api-key.js'

function sameWindows(a: readonly AgreementWindow[], b: readonly AgreementWindow[]): boolean {
  return a.length === b.length && a.every((window, i) => window.from === b[i]!.from && window.until === b[i]!.until)
}

export class SharedOrganisations {
  /** Organisation id -> the states its keys were read in (almost always one). */
  readonly #known = new Map<string, KeyOrganisation[]>()

  /** The shared object equal to `organisation`, which becomes the shared one if none is. */
  share(organisation: KeyOrganisation): KeyOrganisation {
    const states = this.#known.get(organisation.id)
    if (states === undefined) {
      this.#known.set(organisation.id, [organisation])
      return organisation
    }
    const known = states.find(
      (state) => state.active === organisation.active && sameWindows(state.agreements, organisation.agreements),
    )
    if (known !== undefined) return known
    states.push(organisation)
    return organisation
  }

  /** Forgets an organisation that changed (its old states would pile up). */
  forget(organisationId: string): void {
    this.#known.delete(organisationId)
  }

  clear(): void {
    this.#known.clear()
  }
}
