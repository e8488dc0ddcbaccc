/** Where a sign-in leads: the page asked for (`next`, ours only) or the account's home. */

/** Where to go after signing in: only a dashboard path of ours, never another site. */
export function safeNext(value: string): string | undefined {
  return /^\/dashboard(\/[A-Za-z0-9/_?=&%.-]*)?$/.test(value) && !value.startsWith('//') ? value : undefined
}

export function home(role: string): string {
  return role === 'operator' ? '/dashboard/operator/applications' : '/dashboard/partner'
}
