/**
 * The kinds of slide a lesson can hold, and the fields each needs. A lesson's `contentTypes`
 * is the set of kinds its slides use. A new kind is added here, with its checks, and nowhere else.
 */
import { isMap, isScalar, isSeq, type Node, type YAMLMap } from 'yaml'
import type { SourceFile } from './source-file.js'

export const SLIDE_TYPES = ['activity', 'bullets', 'code', 'quiz', 'vocabulary'] as const
export type SlideType = (typeof SLIDE_TYPES)[number]

export const CODE_LANGUAGES = ['javascript', 'pseudocode', 'python'] as const

export type Slide =
  | { type: 'bullets'; heading: string; points: string[] }
  | { type: 'quiz'; question: string; choices: string[]; answer: number; explanation: string }
  | { type: 'activity'; heading: string; steps: string[] }
  | { type: 'vocabulary'; heading: string; terms: { term: string; definition: string }[] }
  | { type: 'code'; heading: string; language: (typeof CODE_LANGUAGES)[number]; code: string; explanation: string }

const FIELDS: Record<SlideType, readonly string[]> = {
  bullets: ['heading', 'points'],
  quiz: ['question', 'choices', 'answer', 'explanation'],
  activity: ['heading', 'steps'],
  vocabulary: ['heading', 'terms'],
  code: ['heading', 'language', 'code', 'explanation'],
}

function isSlideType(value: unknown): value is SlideType {
  return typeof value === 'string' && (SLIDE_TYPES as readonly string[]).includes(value)
}

export function validateSlide(source: SourceFile, node: Node, what: string): Slide | null {
  if (!isMap(node)) {
    source.report(node, `${what} must be a mapping of fields`)
    return null
  }
  const typeNode = (node as YAMLMap<unknown, unknown>).get('type', true) as Node | undefined
  const type = isScalar(typeNode) ? typeNode.value : undefined
  if (!isSlideType(type)) {
    source.report(
      typeNode ?? node,
      typeNode === undefined
        ? `${what} is missing required field "type"`
        : `${what} has unknown type "${String(type)}"; slide types are ${SLIDE_TYPES.join(', ')}`,
    )
    return null
  }
  const before = source.problems.length
  const f = source.fields(node, `${what} (${type})`, ['type', ...FIELDS[type]])
  if (f === null || source.problems.length > before) return null

  switch (type) {
    case 'bullets': {
      const heading = source.string(f.get('heading'), `${what} heading`, 120)
      const points = source.strings(f.get('points'), `${what} points`, 1, 8)
      return heading !== null && points !== null ? { type, heading, points } : null
    }
    case 'activity': {
      const heading = source.string(f.get('heading'), `${what} heading`, 120)
      const steps = source.strings(f.get('steps'), `${what} steps`, 1, 10)
      return heading !== null && steps !== null ? { type, heading, steps } : null
    }
    case 'quiz': {
      const question = source.string(f.get('question'), `${what} question`)
      const choices = source.strings(f.get('choices'), `${what} choices`, 2, 6, 200)
      const explanation = source.string(f.get('explanation'), `${what} explanation`)
      const answerNode = f.get('answer')
      const answer = isScalar(answerNode) ? answerNode.value : undefined
      if (
        choices !== null &&
        (typeof answer !== 'number' || !Number.isInteger(answer) || answer < 0 || answer >= choices.length)
      ) {
        source.report(
          answerNode,
          `${what} answer must be the 0-based index of the right choice, from 0 to ${choices.length - 1}`,
        )
        return null
      }
      if (choices !== null && new Set(choices).size !== choices.length) {
        source.report(f.get('choices'), `${what} choices must all differ`)
        return null
      }
      return question !== null && choices !== null && explanation !== null
        ? { type, question, choices, answer: answer as number, explanation }
        : null
    }
    case 'vocabulary': {
      const heading = source.string(f.get('heading'), `${what} heading`, 120)
      const termsNode = f.get('terms')
      if (!isSeq(termsNode) || termsNode.items.length === 0 || termsNode.items.length > 10) {
        source.report(termsNode, `${what} terms must be a list of 1 to 10 {term, definition} entries`)
        return null
      }
      const terms: { term: string; definition: string }[] = []
      for (const item of termsNode.items as Node[]) {
        const t = source.fields(item, `a term of ${what}`, ['term', 'definition'])
        const term = t && source.string(t.get('term'), `${what} term`, 60)
        const definition = t && source.string(t.get('definition'), `${what} definition`)
        if (term && definition) terms.push({ term, definition })
      }
      return heading !== null && terms.length === termsNode.items.length ? { type, heading, terms } : null
    }
    case 'code': {
      const heading = source.string(f.get('heading'), `${what} heading`, 120)
      const languageNode = f.get('language')
      const language = isScalar(languageNode) ? languageNode.value : undefined
      if (typeof language !== 'string' || !(CODE_LANGUAGES as readonly string[]).includes(language)) {
        source.report(languageNode, `${what} language must be one of ${CODE_LANGUAGES.join(', ')}`)
        return null
      }
      const code = source.string(f.get('code'), `${what} code`, 4000)
      const explanation = source.string(f.get('explanation'), `${what} explanation`)
      return heading !== null && code !== null && explanation !== null
        ? { type, heading, language: language as (typeof CODE_LANGUAGES)[number], code, explanation }
        : null
    }
  }
}
