/**
 * What a use case can refuse, whoever asked (the dashboard, the CLI): the thing named does not
 * exist, or the change conflicts with the state it would change. Each caller turns them into
 * its own answer (a 404 or 409 page, an exit code); the HTTP API's problems are in src/errors.ts.
 */

export class NotFoundError extends Error {
  override name = 'NotFoundError'
}

export class ConflictError extends Error {
  override name = 'ConflictError'
}
