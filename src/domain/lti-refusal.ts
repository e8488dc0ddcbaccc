/**
 * A login, launch or deep link the tool refuses: the status, the page's title and words (for the
 * teacher or student in front of it, and for the operator they show it to), and a short reason
 * that names the check, logged and shown so that a report can be matched to it.
 */
export type LtiRefusalStatus = 400 | 401 | 403 | 404 | 405 | 413 | 415 | 502

export class LtiRefusal extends Error {
  override name = 'LtiRefusal'
  constructor(
    readonly status: LtiRefusalStatus,
    readonly reason: string,
    readonly title: string,
    detail: string,
  ) {
    super(detail)
  }
}
