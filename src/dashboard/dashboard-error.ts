/** A failure the dashboard shows as a page (the API's are problem+json instead). */
export class DashboardError extends Error {
  override name = 'DashboardError'
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail)
  }
}
