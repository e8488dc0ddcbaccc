/**
 * The dashboard's only stylesheet and script, shipped in the package: no CDN, and the strict
 * Content-Security-Policy allows nothing else. The pages work without the script; it adds copy
 * buttons, and passkeys, which only the browser's WebAuthn API can use.
 */
import { PASSKEY_JS } from './passkey-script.js'

export const DASHBOARD_CSS = `
:root {
  color-scheme: light; --fg: #1b1f24; --muted: #4d5560; --line: #c9d1d9; --accent: #0a4fa8; --bg: #ffffff;
  --soft: #f4f6f8; --ok: #0b6b3a; --bad: #a4161a;
}
* { box-sizing: border-box; }
body {
  margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
  background: var(--bg);
}
a { color: var(--accent); }
:focus-visible { outline: 3px solid #1f6feb; outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: #fff; padding: .5rem 1rem; }
.skip:focus { left: .5rem; z-index: 10; }
header.site {
  display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; align-items: center; padding: .75rem 1.25rem;
  border-bottom: 1px solid var(--line); background: var(--soft);
}
.brand { margin: 0; font-weight: 700; }
.brand a { color: var(--fg); text-decoration: none; }
.brand span { color: var(--muted); font-weight: 400; }
nav ul { list-style: none; display: flex; flex-wrap: wrap; gap: .25rem 1rem; margin: 0; padding: 0; }
nav a[aria-current="page"] { font-weight: 700; text-decoration: underline; }
.signout { margin-left: auto; display: flex; gap: .5rem; align-items: center; }
.who { color: var(--muted); font-size: .9rem; }
main { max-width: 980px; margin: 0 auto; padding: 1rem 1.25rem 4rem; }
main:focus { outline: none; }
h1 { font-size: 1.7rem; margin: .5rem 0 1rem; }
h2 { font-size: 1.3rem; margin-top: 2rem; border-bottom: 1px solid var(--line); padding-bottom: .25rem; }
.notice { background: #e6f4ea; border: 1px solid #9bd0ad; padding: .6rem .8rem; border-radius: 6px; }
.error-summary, .field-error { color: var(--bad); }
.error-summary { border: 2px solid var(--bad); padding: .6rem .8rem; border-radius: 6px; }
form.stack { display: grid; gap: 1rem; max-width: 36rem; }
label { font-weight: 600; display: block; }
.hint { color: var(--muted); font-size: .9rem; margin: .15rem 0 .35rem; }
input[type=text], input[type=email], input[type=password], input[type=url], input[type=date], textarea, select {
  width: 100%; padding: .5rem .6rem; font: inherit; border: 1px solid #6e7781; border-radius: 6px; background: #fff;
  color: var(--fg);
}
input[aria-invalid="true"], textarea[aria-invalid="true"] { border-color: var(--bad); border-width: 2px; }
fieldset { border: 1px solid var(--line); border-radius: 6px; padding: .5rem 1rem 1rem; }
legend { font-weight: 600; padding: 0 .25rem; }
.check { display: flex; gap: .5rem; align-items: flex-start; font-weight: 400; margin: .35rem 0; }
.check input { margin-top: .3rem; }
button, .button {
  font: inherit; padding: .5rem 1rem; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent);
  color: #fff; cursor: pointer; text-decoration: none; display: inline-block;
}
button.secondary { background: #fff; color: var(--accent); }
button.danger, .button.danger { background: var(--bad); border-color: var(--bad); color: #fff; }
button.link { background: none; border: none; color: var(--accent); text-decoration: underline; padding: 0; }
.row { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0 1rem; }
.table-wrap { overflow-x: auto; position: relative; }
th, td { border-bottom: 1px solid var(--line); padding: .45rem .5rem; text-align: left; vertical-align: top; }
th { background: var(--soft); }
code, pre, .secret { font: 14px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre {
  background: var(--soft); padding: .75rem; border-radius: 6px; overflow-x: auto; white-space: pre-wrap;
  word-break: break-all;
}
.secret { width: 100%; padding: .5rem; border: 2px solid var(--ok); border-radius: 6px; background: #f0fff4; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: .25rem 1rem 1rem; margin: 1rem 0; }
.state { display: inline-block; padding: .1rem .5rem; border-radius: 999px; font-size: .9rem; border: 1px solid; }
.state.submitted, .state.pending, .state.queued, .state.retrying, .state.sending, .state.rolled {
  color: #7a4b00; border-color: #7a4b00;
}
.state.approved, .state.active, .state.delivered, .state.sent { color: var(--ok); border-color: var(--ok); }
.state.rejected, .state.suspended, .state.ended, .state.expired, .state.revoked, .state.failed, .state.not-sent,
.state.interrupted, .state.inactive {
  color: var(--bad); border-color: var(--bad);
}
.empty { color: var(--muted); font-style: italic; }
.visually-hidden {
  position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0; border: 0; overflow: hidden;
  clip: rect(0 0 0 0); white-space: nowrap;
}
svg.chart { width: 100%; height: auto; max-width: 760px; }
details summary { cursor: pointer; color: var(--accent); }
pre.mail-body { min-width: 32ch; max-width: 72ch; word-break: normal; overflow-wrap: anywhere; }
form.send-again { margin-top: .5rem; }
@media (max-width: 600px) {
  header.site { padding: .5rem .75rem; }
  .signout { margin-left: 0; }
  main { padding: .75rem; }
  th, td { padding: .35rem; }
}
`

/** Adds a working "Copy" button next to every element marked data-copy; without it, the text can be selected. */
export const DASHBOARD_JS = `${PASSKEY_JS}
document.addEventListener('DOMContentLoaded', () => {
  for (const target of document.querySelectorAll('[data-copy]')) {
    const button = document.createElement('button')
    button.type = 'button'
    button.className = 'secondary'
    button.textContent = 'Copy'
    const status = document.createElement('span')
    status.setAttribute('role', 'status')
    status.className = 'hint'
    button.addEventListener('click', async () => {
      const text = 'value' in target ? target.value : target.textContent
      try {
        await navigator.clipboard.writeText(text)
        status.textContent = 'Copied.'
      } catch {
        if ('select' in target) target.select()
        status.textContent = 'Press Ctrl+C (or Cmd+C) to copy.'
      }
    })
    target.insertAdjacentElement('afterend', status)
    target.insertAdjacentElement('afterend', button)
  }
})
`
