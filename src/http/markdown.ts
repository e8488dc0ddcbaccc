/**
 * The small Markdown of the pages /docs serves from files (CHANGELOG.md, docs/versioning.md) and of
 * the error catalogue's texts: headings (with GitHub's ids, so a link to a heading works on both),
 * paragraphs, lists (nested by indentation), fenced code, `code`, **bold** and links. Everything
 * is escaped first, so a file can put no markup of its own on the page.
 */
import { escapeHtml } from '../domain/html-escape.js'

export interface MarkdownOptions {
  /**
   * Where a relative link to another file goes on the served pages (`docs/versioning.md` to
   * `/docs/versioning`); a relative link not listed keeps its text and loses the link.
   */
  readonly links?: Readonly<Record<string, string>>
}

/** A heading's id as GitHub makes it: lower case, punctuation but `-` and `_` dropped, spaces to `-`. */
export function headingSlug(text: string): string {
  return text
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-')
}

function href(target: string, options: MarkdownOptions): string | undefined {
  if (/^(https?:\/\/|\/|#|mailto:)/.test(target)) return target
  const [file = '', anchor] = target.split('#', 2)
  const served = options.links?.[file]
  return served === undefined ? undefined : anchor === undefined ? served : `${served}#${anchor}`
}

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" }

function unescapeHtml(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39);/g, (entity) => ENTITIES[entity]!)
}

/** Bold and links in text outside code spans; the text is escaped already. */
function emphasisAndLinks(escaped: string, options: MarkdownOptions): string {
  return escaped
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
    .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_match, text: string, target: string) => {
      // The target was escaped with the text: read it back to resolve it, escape it again to write it.
      const link = href(unescapeHtml(target), options)
      return link === undefined ? text : `<a href="${escapeHtml(link)}">${text}</a>`
    })
}

/** One line or paragraph of inline Markdown as HTML. */
export function renderInline(text: string, options: MarkdownOptions = {}): string {
  // Odd pieces are code spans: nothing inside them is markup.
  return text
    .split('`')
    .map((piece, i) =>
      i % 2 === 1 ? `<code>${escapeHtml(piece)}</code>` : emphasisAndLinks(escapeHtml(piece), options),
    )
    .join('')
}

interface ListItem {
  indent: number
  /** The number of an ordered list's item, undefined in a bulleted list. */
  number: number | undefined
  lines: string[]
  children: ListItem[]
}

function renderList(items: readonly ListItem[], options: MarkdownOptions): string {
  const first = items[0]?.number
  const tag = first === undefined ? 'ul' : first === 1 ? 'ol' : `ol start="${first}"`
  const body = items
    .map((item) => {
      const nested = item.children.length > 0 ? renderList(item.children, options) : ''
      return `<li>${renderInline(item.lines.join(' '), options)}${nested}</li>`
    })
    .join('\n')
  return `<${tag}>\n${body}\n</${tag.slice(0, 2)}>`
}

const LIST_ITEM = /^(\s*)([-*]|\d+\.)\s+(.*)$/
const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/
const FENCE = /^\s*(```|~~~)/
/** A link reference definition (`[1.0.0]: https://...`): nothing to show. */
const DEFINITION = /^\s*\[[^\]]+\]:\s+\S+\s*$/

/** A whole Markdown file as HTML. */
export function renderMarkdown(text: string, options: MarkdownOptions = {}): string {
  const out: string[] = []
  const seen = new Map<string, number>()
  let paragraph: string[] = []
  let list: ListItem[] = []
  let code: string[] | undefined
  /** The fence's indentation, taken off each line of its code. */
  let fenceIndent = 0

  const flush = () => {
    if (paragraph.length > 0) out.push(`<p>${renderInline(paragraph.join(' '), options)}</p>`)
    paragraph = []
    if (list.length > 0) out.push(renderList(list, options))
    list = []
  }
  const addItem = (indent: number, number: number | undefined, line: string) => {
    let siblings = list
    for (let parent = siblings.at(-1); parent !== undefined && indent > parent.indent; parent = siblings.at(-1))
      siblings = parent.children
    siblings.push({ indent, number, lines: [line], children: [] })
  }
  const lastItem = (items: ListItem[]): ListItem | undefined => {
    const last = items.at(-1)
    return last === undefined || last.children.length === 0 ? last : lastItem(last.children)
  }

  for (const line of text.split(/\r?\n/)) {
    if (code !== undefined) {
      if (FENCE.test(line)) {
        out.push(`<pre><code>${escapeHtml(code.join('\n'))}</code></pre>`)
        code = undefined
      } else code.push(line.slice(Math.min(fenceIndent, line.length - line.trimStart().length)))
      continue
    }
    if (FENCE.test(line)) {
      flush()
      code = []
      fenceIndent = line.length - line.trimStart().length
      continue
    }
    if (line.trim() === '' || DEFINITION.test(line)) {
      // A blank line ends a paragraph; a list goes on until something else starts.
      if (paragraph.length > 0) flush()
      continue
    }
    const heading = HEADING.exec(line)
    if (heading !== null) {
      flush()
      const level = heading[1]!.length
      const base = headingSlug(heading[2]!)
      const repeats = seen.get(base) ?? 0
      seen.set(base, repeats + 1)
      const id = repeats === 0 ? base : `${base}-${repeats}`
      out.push(`<h${level} id="${escapeHtml(id)}">${renderInline(heading[2]!, options)}</h${level}>`)
      continue
    }
    const item = LIST_ITEM.exec(line)
    if (item !== null && paragraph.length === 0) {
      const indent = item[1]!.length
      const number = /\d/.test(item[2]!) ? Number.parseInt(item[2]!, 10) : undefined
      // A list of the other kind at the same level starts a list of its own.
      const top = list[0]
      if (top !== undefined && indent <= top.indent && (number === undefined) !== (top.number === undefined)) flush()
      addItem(indent, number, item[3]!)
      continue
    }
    const open = lastItem(list)
    if (open !== undefined && /^\s/.test(line)) {
      open.lines.push(line.trim())
      continue
    }
    if (list.length > 0) flush()
    paragraph.push(line.trim())
  }
  if (code !== undefined) out.push(`<pre><code>${escapeHtml(code.join('\n'))}</code></pre>`)
  flush()
  return out.join('\n')
}
