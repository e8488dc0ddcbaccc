/**
 * The lesson player's only stylesheet, served by the tool itself (the pages' CSP allows no other
 * source, and no inline style). Its path carries a hash of its text, so a browser may keep it for a
 * year and a changed sheet is a new path. Written for a phone first: nothing is wider than the
 * screen at 360 px, and code scrolls inside its own box.
 */
import { createHash } from 'node:crypto'

export const PLAYER_CSS = `
:root {
  color-scheme: light; --fg: #1b1f24; --muted: #4a5260; --line: #c4ccd6; --accent: #0a4fa8; --bg: #ffffff;
  --soft: #f3f5f8; --ok-bg: #e3f3e8; --ok: #0b5a30; --bad-bg: #fce8ea; --bad: #8f1219;
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }
body {
  margin: 0; font: 18px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
  background: var(--bg); overflow-wrap: anywhere;
}
:focus-visible { outline: 3px solid #1f6feb; outline-offset: 2px; }
main:focus { outline: none; }
.bar {
  display: flex; flex-wrap: wrap; gap: .25rem 1rem; align-items: center; justify-content: space-between;
  padding: .6rem 1rem; background: var(--soft); border-bottom: 1px solid var(--line);
}
.bar h1 { font-size: 1.05rem; margin: 0; }
.where { margin: 0; color: var(--muted); font-size: .95rem; }
.bar progress { flex: 1 1 100%; width: 100%; height: .5rem; accent-color: var(--accent); }
.preview { flex: 1 1 100%; margin: 0; font-size: .9rem; color: var(--muted); }
main { max-width: 44rem; margin: 0 auto; padding: 1rem 1rem 1.5rem; }
h2 { font-size: 1.45rem; line-height: 1.25; margin: .25rem 0 1rem; }
ul, ol { padding-left: 1.4rem; }
li { margin: .4rem 0; }
dl { margin: 0; }
dl div { padding: .6rem 0; border-bottom: 1px solid var(--line); }
dt { font-weight: 700; }
dd { margin: .15rem 0 0; }
.code { margin: 0 0 1rem; border: 1px solid var(--line); border-radius: 6px; background: #f6f8fa; overflow-x: auto; }
.code pre { margin: 0; padding: .75rem 1rem; font: 15px/1.5 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.code-language { margin: 0 0 .25rem; color: var(--muted); font-size: .9rem; }
fieldset {
  border: 1px solid var(--line); border-radius: 6px; margin: 0 0 1rem; padding: .5rem 1rem 1rem; min-width: 0;
}
legend { font-weight: 700; font-size: 1.15rem; padding: 0 .25rem; }
.choice { display: flex; gap: .6rem; align-items: flex-start; margin: .5rem 0; }
.choice input { width: 1.25rem; height: 1.25rem; margin: .2rem 0 0; flex: none; }
.choice label { flex: 1; }
.feedback { border: 2px solid; border-radius: 6px; padding: .5rem 1rem; margin: 0 0 1rem; }
.feedback:focus { outline: 3px solid #1f6feb; }
.feedback.right { background: var(--ok-bg); border-color: var(--ok); color: var(--ok); }
.feedback.wrong { background: var(--bad-bg); border-color: var(--bad); color: var(--bad); }
.feedback h3 { margin: .25rem 0; font-size: 1.15rem; }
.feedback p { color: var(--fg); }
.field-error { color: var(--bad); font-weight: 700; }
.steps { max-width: 44rem; margin: 0 auto; padding: 0 1rem 2rem; }
.steps form { display: flex; flex-wrap: wrap; gap: .75rem; justify-content: space-between; }
button {
  font: inherit; min-height: 44px; padding: .5rem 1.25rem; border-radius: 6px; border: 2px solid var(--accent);
  background: var(--accent); color: #fff; cursor: pointer;
}
button.secondary { background: #fff; color: var(--accent); }
button:hover { text-decoration: underline; }
.next { margin-left: auto; }
`

const hash = createHash('sha256').update(PLAYER_CSS).digest('hex').slice(0, 12)

/** Under the /lti prefix: the route's path, and the href pages link to. */
export const PLAYER_CSS_ROUTE = `/assets/player-${hash}.css`
export const PLAYER_CSS_HREF = `/lti${PLAYER_CSS_ROUTE}`
