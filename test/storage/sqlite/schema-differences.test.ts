/**
 * What the schema comparison of `backup --verify` and `restore` counts as a difference: layout
 * never, a changed string or name always, and a second row of one name in sqlite_master (which
 * only a hand-edited schema has) as an extra object.
 */
import { describe, expect, it } from 'vitest'
import { compareSchemas, normalisedSql } from '../../../src/storage/sqlite/schema-differences.js'

describe('normalisedSql', () => {
  it('ignores layout outside quotes', () => {
    expect(normalisedSql('CREATE TABLE "a" (\n      x text ,\n  y   text\n)')).toBe(
      normalisedSql('CREATE TABLE "a"(x text, y text)'),
    )
  })

  it('keeps every change inside a string or a quoted name', () => {
    expect(normalisedSql(`CREATE TABLE a (x text default ' a')`)).not.toBe(
      normalisedSql(`CREATE TABLE a (x text default '  a')`),
    )
    expect(normalisedSql('CREATE TABLE "a b" (x text)')).not.toBe(normalisedSql('CREATE TABLE "a  b" (x text)'))
    expect(normalisedSql(`CREATE TABLE a (x text default 'it''s  here')`)).toBe(
      `CREATE TABLE a(x text default 'it''s  here')`,
    )
  })
})

describe('compareSchemas', () => {
  const table = { type: 'table', name: 'students', table: 'students', sql: 'CREATE TABLE students (id text)' }

  it('counts a second row of one name as an extra object', () => {
    expect(compareSchemas([table], [table, { ...table, sql: 'CREATE TABLE students (id text, notes text)' }])).toEqual([
      { change: 'extra', type: 'table', name: 'students', table: 'students' },
    ])
  })

  it('names what is missing and what is defined otherwise', () => {
    const index = {
      type: 'index',
      name: 'students_id',
      table: 'students',
      sql: 'CREATE INDEX students_id ON students (id)',
    }
    expect(compareSchemas([table, index], [{ ...table, sql: 'CREATE TABLE students (id integer)' }])).toEqual([
      { change: 'changed', type: 'table', name: 'students', table: 'students' },
      { change: 'missing', type: 'index', name: 'students_id', table: 'students' },
    ])
  })
})
