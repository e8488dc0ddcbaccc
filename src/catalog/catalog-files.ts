/**
 * Reads the curriculum from its files and checks everything before anything is written:
 *
 *   <dir>/tiers.yaml                               the tiers, in catalog order
 *   <dir>/<tier>/<lessonId>-<title-words>.yaml     one lesson each
 *   <dir>/case/<framework>.json                    a framework's CASE map, if imported (case-map.ts)
 *
 * Every problem is reported with its file and line, all at once, so an author fixes a whole
 * batch in one pass. slideCount and contentTypes are computed here, never typed by hand.
 */
import fs from 'node:fs'
import path from 'node:path'
import { isMap, isScalar, isSeq, type Node, type YAMLMap } from 'yaml'
import { isTierId, TIER_IDS, type TierId } from '../domain/tiers.js'
import { FRAMEWORK_NAME } from '../domain/standard-reference.js'
import { CASE_FOLDER, type CaseMap, readCaseMaps } from './case-map.js'
import { SLIDE_TYPES, type Slide, type SlideType, validateSlide } from './slides.js'
import { type CatalogProblem, SourceFile } from './source-file.js'

export type { CatalogProblem } from './source-file.js'

export interface TierData {
  id: TierId
  label: string
  ageRange: string
}

/** One code of a lesson's standards, with its CASE item when the framework's map has one. */
export interface StandardAlignment {
  framework: string
  code: string
  caseIdentifier?: string
  caseUri?: string
}

export interface LessonData {
  slug: string
  tier: TierId
  lessonId: string
  title: string
  standards: Record<string, string[]>
  /** Every code of `standards`, in its order, with what the CASE maps say of it. */
  standardsAlignment: StandardAlignment[]
  slides: Slide[]
  slideCount: number
  contentTypes: SlideType[]
  /** Position in catalog order, from 0. */
  position: number
  sourceFile: string
}

export interface CatalogData {
  tiers: TierData[]
  lessons: LessonData[]
}

export type CatalogReadResult = { ok: true; catalog: CatalogData } | { ok: false; problems: CatalogProblem[] }

export const LESSON_FILE = /^([a-z][0-9]{1,3})-([a-z0-9]+(?:-[a-z0-9]+)*)\.yaml$/
export { SLUG } from '../domain/slug.js'
const AGE_RANGE = /^(\d{1,2})-(\d{1,2})$/
const CSTA_CODE = /^(1A|1B|2|3A|3B)-(CS|NI|DA|AP|IC)-\d{2}$/

function readTiers(source: SourceFile): TierData[] {
  const root = source.root
  if (root === null) return []
  if (!isSeq(root)) {
    source.report(root, 'tiers.yaml must be a list of tiers')
    return []
  }
  const tiers: TierData[] = []
  const seen = new Set<string>()
  for (const item of root.items as Node[]) {
    const fields = source.fields(item, 'a tier', ['id', 'label', 'ageRange'])
    if (fields === null) continue
    const id = source.string(fields.get('id'), 'id')
    const label = source.string(fields.get('label'), 'label', 60)
    const ageNode = fields.get('ageRange')
    const ageRange = isScalar(ageNode) ? String(ageNode.value) : null
    if (id !== null && !isTierId(id))
      source.report(fields.get('id'), `unknown tier "${id}"; tiers are ${TIER_IDS.join(', ')}`)
    else if (id !== null && seen.has(id)) source.report(fields.get('id'), `tier "${id}" is listed twice`)
    if (id !== null) seen.add(id)
    const ages = ageRange === null ? null : AGE_RANGE.exec(ageRange)
    if (ageNode !== undefined && (ages === null || Number(ages[1]) > Number(ages[2]))) {
      source.report(
        ageNode,
        `ageRange must be written <min>-<max> with min <= max, e.g. 8-10 (got "${ageRange ?? ''}")`,
      )
    }
    if (id !== null && isTierId(id) && label !== null && ages !== null && ageRange !== null)
      tiers.push({ id, label, ageRange })
  }
  for (const id of TIER_IDS) if (!seen.has(id)) source.report(root, `tier "${id}" is missing`)
  return tiers
}

function readStandards(source: SourceFile, node: Node | undefined): Record<string, string[]> | null {
  if (node === undefined) return null
  if (!isMap(node)) {
    source.report(node, 'standards must be a mapping of framework to codes, e.g. csta: [1A-AP-08], or {}')
    return null
  }
  const standards: Record<string, string[]> = {}
  let ok = true
  for (const pair of (node as YAMLMap<unknown, unknown>).items) {
    const framework = isScalar(pair.key) ? String(pair.key.value) : ''
    if (!FRAMEWORK_NAME.test(framework)) {
      source.report(pair.key as Node, `standards framework "${framework}" must be a lower-case name such as csta`)
      ok = false
      continue
    }
    const codes = source.strings(pair.value as Node, `standards.${framework}`, 1, 20, 40)
    if (codes === null) {
      ok = false
      continue
    }
    if (new Set(codes).size !== codes.length) {
      source.report(pair.value as Node, `standards.${framework} lists a code twice`)
      ok = false
    }
    if (framework === 'csta') {
      for (const code of codes) {
        if (!CSTA_CODE.test(code)) {
          source.report(
            pair.value as Node,
            `"${code}" is not a CSTA K-12 standard code (form 1A-AP-08, 1B-CS-02, 2-DA-07)`,
          )
          ok = false
        }
      }
    }
    standards[framework] = codes
  }
  return ok ? standards : null
}

function readLesson(
  source: SourceFile,
  tier: TierId,
  fileLessonId: string,
  slug: string,
): Omit<LessonData, 'position' | 'standardsAlignment'> | null {
  const fields = source.fields(source.root, 'a lesson', ['lessonId', 'title', 'standards', 'slides'])
  if (fields === null) return null
  const lessonId = source.string(fields.get('lessonId'), 'lessonId', 8)
  if (lessonId !== null && lessonId !== fileLessonId) {
    source.report(
      fields.get('lessonId'),
      `lessonId "${lessonId}" does not match the file name, which starts with "${fileLessonId}"`,
    )
  }
  const title = source.string(fields.get('title'), 'title', 120)
  const standards = readStandards(source, fields.get('standards'))
  const slidesNode = fields.get('slides')
  const slides: Slide[] = []
  if (slidesNode !== undefined) {
    if (!isSeq(slidesNode) || slidesNode.items.length === 0)
      source.report(slidesNode, 'slides must be a non-empty list')
    else if (slidesNode.items.length > 50) source.report(slidesNode, 'a lesson has at most 50 slides')
    else {
      for (const [index, item] of (slidesNode.items as Node[]).entries()) {
        const slide = validateSlide(source, item, `slide ${index + 1}`)
        if (slide !== null) slides.push(slide)
      }
    }
  }
  if (source.problems.length > 0 || lessonId === null || title === null || standards === null) return null
  const contentTypes = SLIDE_TYPES.filter((type) => slides.some((slide) => slide.type === type))
  return {
    slug,
    tier,
    lessonId,
    title,
    standards,
    slides,
    slideCount: slides.length,
    contentTypes: [...contentTypes].sort(),
    sourceFile: source.name,
  }
}

/** The lesson's codes in order, each with its item from its framework's map if the map has it. */
export function alignStandards(
  standards: Record<string, string[]>,
  maps: ReadonlyMap<string, CaseMap>,
): StandardAlignment[] {
  return Object.entries(standards).flatMap(([framework, codes]) =>
    codes.map((code) => {
      const item = maps.get(framework)?.codes.get(code)
      return item === undefined
        ? { framework, code }
        : { framework, code, caseIdentifier: item.identifier, caseUri: item.uri }
    }),
  )
}

/** Natural order of lesson ids: b2 before b10. */
function compareLessonIds(a: string, b: string): number {
  return a.charCodeAt(0) - b.charCodeAt(0) || Number(a.slice(1)) - Number(b.slice(1))
}

export function readCatalogDir(dir: string): CatalogReadResult {
  const problems: CatalogProblem[] = []
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
    return { ok: false, problems: [{ file: dir, line: 1, message: 'catalog folder not found' }] }
  }
  const tiersPath = path.join(dir, 'tiers.yaml')
  let tiers: TierData[] = []
  if (!fs.existsSync(tiersPath)) problems.push({ file: 'tiers.yaml', line: 1, message: 'tiers.yaml is missing' })
  else {
    const source = new SourceFile('tiers.yaml', fs.readFileSync(tiersPath, 'utf8'))
    tiers = readTiers(source)
    problems.push(...source.problems)
  }

  const maps = readCaseMaps(dir, problems)
  const lessons: Omit<LessonData, 'position' | 'standardsAlignment'>[] = []
  const seenIds = new Map<string, string>()
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.isFile()) {
      if (entry.name !== 'tiers.yaml' && entry.name.endsWith('.yaml')) {
        problems.push({
          file: entry.name,
          line: 1,
          message: 'lesson files belong in a tier folder: <tier>/<lessonId>-<title-words>.yaml',
        })
      }
      continue
    }
    if (!entry.isDirectory() || entry.name === CASE_FOLDER) continue
    if (!isTierId(entry.name)) {
      problems.push({
        file: `${entry.name}/`,
        line: 1,
        message: `unknown tier folder "${entry.name}"; tiers are ${TIER_IDS.join(', ')}`,
      })
      continue
    }
    const tier = entry.name
    for (const file of fs
      .readdirSync(path.join(dir, tier), { withFileTypes: true })
      .sort((a, b) => a.name.localeCompare(b.name))) {
      const name = `${tier}/${file.name}`
      const match = LESSON_FILE.exec(file.name)
      if (!file.isFile() || match === null) {
        problems.push({
          file: name,
          line: 1,
          message:
            'lesson file names have the form <lessonId>-<title-words>.yaml: ' +
            'a letter and digits, then lower-case words joined by hyphens',
        })
        continue
      }
      const lessonId = match[1]!
      const duplicate = seenIds.get(`${tier}/${lessonId}`)
      if (duplicate !== undefined) {
        problems.push({
          file: name,
          line: 1,
          message: `lessonId "${lessonId}" is already used by ${duplicate} in tier ${tier}`,
        })
        continue
      }
      seenIds.set(`${tier}/${lessonId}`, name)
      const source = new SourceFile(name, fs.readFileSync(path.join(dir, tier, file.name), 'utf8'))
      const lesson =
        source.root === null
          ? null
          : readLesson(source, tier, lessonId, `${tier}/${file.name.slice(0, -'.yaml'.length)}`)
      problems.push(...source.problems)
      if (lesson !== null) lessons.push(lesson)
    }
  }
  if (problems.length > 0) return { ok: false, problems }

  const tierOrder = new Map(tiers.map((tier, index) => [tier.id, index]))
  lessons.sort((a, b) => tierOrder.get(a.tier)! - tierOrder.get(b.tier)! || compareLessonIds(a.lessonId, b.lessonId))
  return {
    ok: true,
    catalog: {
      tiers,
      lessons: lessons.map((lesson, position) => ({
        ...lesson,
        standardsAlignment: alignStandards(lesson.standards, maps),
        position,
      })),
    },
  }
}

export function formatProblem(problem: CatalogProblem): string {
  return `${problem.file}:${problem.line}: ${problem.message}`
}
