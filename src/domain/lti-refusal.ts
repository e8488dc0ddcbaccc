/**
 * A login, launch or deep link the tool refuses (or, 500 and 503, fails on its own side): the
 * status, the page's title and words (for the teacher or student in front of it, and for the
 * operator they show it to), and a short reason that names the check, logged and shown so that a
 * report can be matched to it.
 */
export type LtiRefusalStatus = 400 | 401 | 403 | 404 | 405 | 413 | 415 | 500 | 502 | 503

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
