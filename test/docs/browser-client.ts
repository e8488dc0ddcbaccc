/**
 * A client for the dashboard of a running server that behaves like a browser on its forms: it
 * keeps the cookies it is given, follows redirects (a 303 after a POST becomes a GET), sends the
 * Origin and Sec-Fetch-Site headers a browser sends, and submits a form with the hidden fields
 * the page put in it (the CSRF token among them).
 */
import { htmlText } from './shell-examples.js'

export interface Page {
  status: number
  /** The address of the page shown, after any redirect. */
  url: string
  body: string
}

const REDIRECTS = new Set([301, 302, 303, 307, 308])

export class BrowserClient {
  readonly #origin: string
  /** Every page here is under /dashboard, the Path of the dashboard's cookies over plain HTTP. */
  readonly #cookies = new Map<string, string>()

  constructor(origin: string) {
    this.#origin = origin
  }

  #remember(response: Response): void {
    for (const cookie of response.headers.getSetCookie()) {
      const [pair = ''] = cookie.split(';')
      const at = pair.indexOf('=')
      const name = pair.slice(0, at).trim()
      if (/;\s*Max-Age=0/i.test(cookie)) this.#cookies.delete(name)
      else this.#cookies.set(name, pair.slice(at + 1))
    }
  }

  async #request(method: 'GET' | 'POST', url: string, body?: URLSearchParams): Promise<Page> {
    for (let hops = 0; hops < 10; hops++) {
      const headers: Record<string, string> = {
        'sec-fetch-site': hops === 0 && method === 'GET' ? 'none' : 'same-origin',
      }
      if (this.#cookies.size > 0)
        headers.cookie = [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ')
      if (method === 'POST')
        Object.assign(headers, { origin: this.#origin, 'content-type': 'application/x-www-form-urlencoded' })
      const response = await fetch(url, {
        method,
        headers,
        redirect: 'manual',
        ...(method === 'POST' ? { body: body!.toString() } : {}),
      })
      this.#remember(response)
      const location = response.headers.get('location')
      if (!REDIRECTS.has(response.status) || location === null)
        return { status: response.status, url, body: await response.text() }
      await response.body?.cancel()
      url = new URL(location, url).toString()
      if (response.status === 303 || method === 'POST') method = 'GET'
    }
    throw new Error(`too many redirects from ${url}`)
  }

  /** Opens a page, as by typing its address. */
  get(path: string): Promise<Page> {
    return this.#request('GET', new URL(path, this.#origin).toString())
  }

  /** Submits the page's form that posts to `action`, with its hidden fields and the fields filled in. */
  submit(page: Page, action: string, fields: Record<string, string>): Promise<Page> {
    const form = new RegExp(`<form\\b[^>]*action="${action}"[^>]*>([\\s\\S]*?)</form>`).exec(page.body)?.[1]
    if (form === undefined) throw new Error(`no form posting to ${action} on ${page.url}`)
    const body = new URLSearchParams()
    for (const [input] of form.matchAll(/<input\b[^>]*type="hidden"[^>]*>/g)) {
      const name = /name="([^"]*)"/.exec(input)?.[1]
      if (name !== undefined && !(name in fields)) body.append(name, htmlText(/value="([^"]*)"/.exec(input)?.[1] ?? ''))
    }
    for (const [name, value] of Object.entries(fields)) body.append(name, value)
    return this.#request('POST', new URL(action, page.url).toString(), body)
  }
}
