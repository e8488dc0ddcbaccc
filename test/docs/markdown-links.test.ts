/**
 * Every relative link of the README and the docs pages reaches something: the file exists, and a
 * `#anchor` on a markdown page names one of its headings, slugged as GitHub does (lower-case,
 * punctuation but hyphens and underscores dropped, spaces to hyphens, `-1`, `-2` for repeats).
 * Moving a section to another page without fixing the links to it fails here.
 */
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = path.resolve(import.meta.dirname, '../..')

const PAGES = [
  'README.md',
  'CHANGELOG.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
]

/** The page's text outside fenced code blocks, one entry a line (a blank for each line left out, so numbers stay). */
function proseLines(text: string): string[] {
  let fenced = false
  return text.split('\n').map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced
      return ''
    }
    return fenced ? '' : line
  })
}

function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-')
}

function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  for (const line of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (!heading) continue
    const base = slug(heading[1] ?? '')
    const repeats = seen.get(base) ?? 0
    seen.set(base, repeats + 1)
    anchors.add(repeats === 0 ? base : `${base}-${repeats}`)
  }
  return anchors
}

interface Link {
  where: string
  target: string
}

function relativeLinks(page: string): Link[] {
  const text = fs.readFileSync(path.join(ROOT, page), 'utf8')
  // Inline code spans are not links; blank them, keeping line breaks for the line numbers.
  const prose = proseLines(text)
    .join('\n')
    .replace(/`[^`\n]*`/g, (code) => ' '.repeat(code.length))
  const links: Link[] = []
  for (const match of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = match[1] ?? ''
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('/')) continue
    const line = prose.slice(0, match.index).split('\n').length
    links.push({ where: `${page}:${line}`, target })
  }
  return links
}

function brokenLinks(): string[] {
  const anchors = new Map<string, Set<string>>()
  const anchorsOfFile = (file: string) => {
    let found = anchors.get(file)
    if (!found) {
      found = anchorsOf(fs.readFileSync(file, 'utf8'))
      anchors.set(file, found)
    }
    return found
  }
  return PAGES.flatMap((page) =>
    relativeLinks(page).flatMap(({ where, target }) => {
      const hash = target.indexOf('#')
      const filePart = hash === -1 ? target : target.slice(0, hash)
      const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1))
      const file = filePart === '' ? path.join(ROOT, page) : path.resolve(path.dirname(path.join(ROOT, page)), filePart)
      if (!fs.existsSync(file)) return [`${where}: ${target}: no such file`]
      if (anchor === undefined || !file.endsWith('.md')) return []
      return anchorsOfFile(file).has(anchor) ? [] : [`${where}: ${target}: no heading with that anchor`]
    }),
  )
}

describe('links between the docs pages', () => {
  it('slugs headings as GitHub does', () => {
    expect(slug("The database's files")).toBe('the-databases-files')
    expect(slug('Behind a reverse proxy (production)')).toBe('behind-a-reverse-proxy-production')
    expect(slug('TRUST_PROXY')).toBe('trust_proxy')
    expect(slug('Resyncing after `cursor_expired`')).toBe('resyncing-after-cursor_expired')
    expect([...anchorsOf('# A\n```sh\n# not a heading\n```\n## A\n')]).toEqual(['a', 'a-1'])
  })

  it('point to files that exist and to headings those pages have', () => {
    expect(PAGES).toContain('docs/operating.md')
    expect(brokenLinks()).toEqual([])
  })
})
