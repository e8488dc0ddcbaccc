/**
 * The tool's pages inside a platform: one small layout, its inline style and (for the forms that
 * post themselves) one fixed inline script, each allowed by its hash in the page's
 * Content-Security-Policy, so that nothing else can run. They are shown in the platform's iframe,
 * so they may be framed, and they set no cookie and send no referrer.
 */
import { createHash } from 'node:crypto'
import { type Html, html, trusted } from '../dashboard/html.js'

const STYLE = `
:root { color-scheme: light; --fg: #1b1f24; --muted: #4d5560; --line: #c9d1d9; --accent: #0a4fa8; --bad: #a4161a; }
* { box-sizing: border-box; }
body {
  margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: var(--fg); background: #fff;
}
main { max-width: 60rem; margin: 0 auto; padding: 1rem 1.25rem 3rem; }
h1 { font-size: 1.5rem; margin: .5rem 0 1rem; }
h2 { font-size: 1.2rem; margin: 1.5rem 0 .5rem; }
fieldset { border: 1px solid var(--line); border-radius: 6px; margin: 0 0 1rem; padding: .5rem 1rem 1rem; }
legend { font-weight: 700; padding: 0 .25rem; }
ul.lessons { list-style: none; margin: 0; padding: 0; display: grid; gap: .5rem; }
ul.lessons li { display: flex; gap: .6rem; align-items: flex-start; }
ul.lessons input { margin-top: .35rem; width: 1.2rem; height: 1.2rem; }
.meta, .reason { color: var(--muted); font-size: .9rem; }
.error-summary { color: var(--bad); border: 2px solid var(--bad); padding: .6rem .8rem; border-radius: 6px; }
button {
  font: inherit; padding: .5rem 1.1rem; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent);
  color: #fff; cursor: pointer;
}
button:focus-visible, input:focus-visible { outline: 3px solid #1f6feb; outline-offset: 2px; }
`
/** Submits the page's one form at once; without JavaScript its Continue button does the same. */
const AUTO_POST = 'document.forms[0].submit()'

const hashOf = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`
const STYLE_HASH = hashOf(STYLE)
const AUTO_POST_HASH = hashOf(AUTO_POST)

export interface PageOptions {
  /** Where the page's forms may post, besides the tool itself. */
  formAction?: string
  /** The page posts its form by itself (the auto-post script is allowed). */
  autoPost?: boolean
}

/**
 * The policy of an LTI page. `frame-ancestors` cannot name the platform: hosted platforms frame
 * the tool from each school's own host, which no registration records, so any https page may
 * (and, in development with loopback platforms allowed, http pages on this machine).
 */
export function ltiContentSecurityPolicy(options: PageOptions & { allowHttp: boolean }): string {
  return [
    "default-src 'none'",
    `style-src ${STYLE_HASH}`,
    `script-src ${options.autoPost === true ? AUTO_POST_HASH : "'none'"}`,
    "img-src 'self' data:",
    `form-action 'self'${options.formAction === undefined ? '' : ` ${options.formAction}`}`,
    `frame-ancestors 'self' https:${options.allowHttp ? ' http://localhost:* http://127.0.0.1:* http://[::1]:*' : ''}`,
    "base-uri 'none'",
  ].join('; ')
}

/** A whole page: title, one <h1>, the body. */
export function ltiPage(title: string, body: Html): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<style>${trusted(STYLE)}</style>
</head>
<body>
<main>
<h1>${title}</h1>
${body}
</main>
</body>
</html>`.value
}

/** A page whose form posts `fields` to `action` by itself, or when its Continue button is pressed. */
export function autoPostPage(
  title: string,
  explanation: string,
  action: string,
  fields: Record<string, string>,
): string {
  const inputs = Object.entries(fields).map(
    ([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`,
  )
  return ltiPage(
    title,
    html`<form method="post" action="${action}">
${inputs}
<p>${explanation}</p>
<button type="submit">Continue</button>
</form>
<script>${trusted(AUTO_POST)}</script>`,
  )
}
