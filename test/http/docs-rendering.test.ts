/**
 * The pieces of /docs that are pure functions: the small Markdown renderer of the changelog and
 * versioning pages, the deprecation of an operation from its two dates, and the error catalogue's
 * sections. Over HTTP, test/http/versioning.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { PROBLEM_CATALOG, PROBLEM_CODES } from '../../src/errors.js'
import { deprecation } from '../../src/domain/deprecation.js'
import { renderErrorsPage } from '../../src/http/errors-page.js'
import { headingSlug, renderInline, renderMarkdown } from '../../src/http/markdown.js'

describe('renderMarkdown', () => {
  it("gives headings GitHub's ids, repeats numbered", () => {
    expect(headingSlug('[1.5.0] - 2026-12-07')).toBe('150---2026-12-07')
    expect(headingSlug('What a `v2` would mean')).toBe('what-a-v2-would-mean')
    expect(renderMarkdown('## Added\n\n### Added\n\n## Added')).toBe(
      '<h2 id="added">Added</h2>\n<h3 id="added-1">Added</h3>\n<h2 id="added-2">Added</h2>',
    )
  })

  it('joins a paragraph, nests lists by indentation and keeps continuation lines in their item', () => {
    const html = renderMarkdown(
      'One line\nand the next.\n\n- first\n  still first\n  - inner\n- second\n\n1. one\n2. two\n\nAfter.',
    )
    expect(html).toBe(
      [
        '<p>One line and the next.</p>',
        '<ul>\n<li>first still first<ul>\n<li>inner</li>\n</ul></li>\n<li>second</li>\n</ul>',
        '<ol>\n<li>one</li>\n<li>two</li>\n</ol>',
        '<p>After.</p>',
      ].join('\n'),
    )
  })

  it('goes on numbering an ordered list that a code block interrupted, and unindents the code', () => {
    expect(renderMarkdown('1. one\n\n   ```\n   a\n     b\n   ```\n\n2. two')).toBe(
      '<ol>\n<li>one</li>\n</ol>\n<pre><code>a\n  b</code></pre>\n<ol start="2">\n<li>two</li>\n</ol>',
    )
  })

  it('keeps fenced code as it is, escaped, and drops link definitions', () => {
    const html = renderMarkdown('```\nDeprecation: @1\n<b>&\n```\n\n[1.0.0]: https://example.org/compare')
    expect(html).toBe('<pre><code>Deprecation: @1\n&lt;b&gt;&amp;</code></pre>')
  })

  it('escapes text, renders code, bold and links, and maps links between files', () => {
    const links = { links: { 'docs/versioning.md': '/docs/versioning' } }
    expect(renderInline('a <script> & **b** `<c>` [d](https://keepachangelog.com/en/1.1.0/)')).toBe(
      'a &lt;script&gt; &amp; <strong>b</strong> <code>&lt;c&gt;</code> ' +
        '<a href="https://keepachangelog.com/en/1.1.0/">d</a>',
    )
    expect(renderInline('[policy](docs/versioning.md#deprecation) [x](/docs?a=1&b=2)', links)).toBe(
      '<a href="/docs/versioning#deprecation">policy</a> <a href="/docs?a=1&amp;b=2">x</a>',
    )
    // A file the service does not serve keeps its words and loses its link.
    expect(renderInline('[the API guide](docs/api.md)', links)).toBe('the API guide')
    expect(renderInline('[x](javascript:alert%281%29)')).toBe('x')
    expect(renderInline('[x](/a"onclick=b)')).toBe('<a href="/a&quot;onclick=b">x</a>')
  })
})

describe('deprecation', () => {
  it('gives the RFC 9745 and RFC 8594 headers of its dates', () => {
    const dated = deprecation({ deprecatedAt: '2027-01-04', sunsetAt: '2027-07-05' })
    expect(dated.headers).toEqual({
      deprecation: `@${Date.parse('2027-01-04T00:00:00Z') / 1000}`,
      sunset: 'Mon, 05 Jul 2027 00:00:00 GMT',
      link: '</docs/changelog>; rel="deprecation"; type="text/html"',
    })
    expect(Object.isFrozen(dated) && Object.isFrozen(dated.headers)).toBe(true)
    expect(deprecation({ deprecatedAt: '2027-01-04T12:30:00Z', sunsetAt: '2028-01-01' }).headers.deprecation).toBe(
      `@${Date.parse('2027-01-04T12:30:00Z') / 1000}`,
    )
  })

  it('refuses dates it cannot read, and a sunset less than six months after the deprecation', () => {
    expect(() => deprecation({ deprecatedAt: 'soon', sunsetAt: '2027-07-05' })).toThrow(/deprecatedAt/)
    expect(() => deprecation({ deprecatedAt: '2027-01-04', sunsetAt: '2027-02-30x' })).toThrow(/sunsetAt/)
    expect(() => deprecation({ deprecatedAt: '2027-01-04', sunsetAt: '2027-07-03' })).toThrow(/6 months/)
    expect(() => deprecation({ deprecatedAt: '2027-01-04', sunsetAt: '2026-12-01' })).toThrow(/6 months/)
    expect(deprecation({ deprecatedAt: '2027-01-04', sunsetAt: '2027-07-04' }).sunsetAt).toBe('2027-07-04')
  })
})

describe('the error catalogue page', () => {
  it('has a section per code, whose id is the code, with the cause and the fix of the catalogue', () => {
    const html = renderErrorsPage()
    for (const code of PROBLEM_CODES) {
      expect(html).toContain(`<section class="problem" id="${code}"`)
      expect(html).toContain(`<a href="#${code}"><code>${code}</code></a>`)
      expect(PROBLEM_CATALOG[code].cause.trim()).not.toBe('')
      expect(PROBLEM_CATALOG[code].fix.trim()).not.toBe('')
    }
  })
})
