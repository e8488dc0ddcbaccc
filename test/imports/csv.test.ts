import { describe, expect, it } from 'vitest'
import { CsvParser, parseCsv } from '../../src/imports/csv.js'

const rows = (text: string) => parseCsv(text).map((record) => record.fields)

/** Feeds the text one character at a time: every state must survive a chunk boundary. */
function parseByCharacter(text: string) {
  const parser = new CsvParser()
  const records = [...text].flatMap((character) => parser.push(character))
  return [...records, ...parser.end()]
}

describe('CSV parser', () => {
  it('splits plain fields and records', () => {
    expect(rows('a,b,c\n1,2,3\n')).toEqual([
      ['a', 'b', 'c'],
      ['1', '2', '3'],
    ])
  })

  it('keeps empty fields, including a trailing one', () => {
    expect(rows('a,,c\n,\nx,\n')).toEqual([
      ['a', '', 'c'],
      ['', ''],
      ['x', ''],
    ])
  })

  it('reads a last record without a final line break', () => {
    expect(rows('a,b\n1,2')).toEqual([
      ['a', 'b'],
      ['1', '2'],
    ])
  })

  it('reads quoted fields holding commas', () => {
    expect(rows('"a,b",c\n')).toEqual([['a,b', 'c']])
  })

  it('turns a doubled quote inside a quoted field into one quote', () => {
    expect(rows('"say ""hi""",x\n""""\n')).toEqual([['say "hi"', 'x'], ['"']])
  })

  it('accepts CRLF, LF and lone CR line breaks', () => {
    expect(rows('a,b\r\n1,2\r\n3,4\n5,6\r7,8')).toEqual([
      ['a', 'b'],
      ['1', '2'],
      ['3', '4'],
      ['5', '6'],
      ['7', '8'],
    ])
  })

  it('keeps line breaks inside quoted fields and numbers records by their first physical line', () => {
    const records = parseCsv('id,note\r\n1,"two\r\nlines"\r\n2,"three\nmore\nlines"\n3,plain\n')
    expect(records.map((record) => record.fields)).toEqual([
      ['id', 'note'],
      ['1', 'two\r\nlines'],
      ['2', 'three\nmore\nlines'],
      ['3', 'plain'],
    ])
    expect(records.map((record) => record.line)).toEqual([1, 2, 4, 7])
  })

  it('skips blank lines but still counts them', () => {
    const records = parseCsv('a\n\n\r\nb\n')
    expect(records.map((record) => [record.line, record.fields])).toEqual([
      [1, ['a']],
      [4, ['b']],
    ])
  })

  it('drops a UTF-8 byte order mark', () => {
    expect(rows('\uFEFFid,name\n')).toEqual([['id', 'name']])
  })

  it('gives the same result whatever the chunk boundaries', () => {
    const text = '\uFEFFid,"note"\r\n1,"a ""quoted"", multi\r\nline"\r\n2,x\r3,"y"\n'
    expect(parseByCharacter(text)).toEqual(parseCsv(text))
    expect(parseByCharacter(text).map((record) => record.line)).toEqual([1, 2, 4, 5])
  })

  it('flags a quote inside an unquoted field and goes on reading', () => {
    const records = parseCsv('a"b,c\nok,1\n')
    expect(records[0]!.error).toMatch(/quote inside an unquoted field/)
    expect(records[1]).toEqual({ line: 2, fields: ['ok', '1'] })
  })

  it('flags text after a closing quote', () => {
    const [record] = parseCsv('"a"b,c\n')
    expect(record!.error).toMatch(/after the closing quote/)
  })

  it('flags a quoted field left open at the end of the file', () => {
    const records = parseCsv('a,b\n1,"never closed\n2,3\n')
    expect(records).toHaveLength(2)
    expect(records[1]!.line).toBe(2)
    expect(records[1]!.error).toMatch(/not closed/)
  })
})
