/**
 * A lesson slug: `<tier>/<lessonId>-<title-words>`, e.g. `explorer/e1-robots-follow-instructions`.
 * The file name of a lesson gives it; the API takes it as the lesson key.
 */
export const SLUG = /^(explorer|builder|innovator)\/[a-z][0-9]{1,3}-[a-z0-9]+(?:-[a-z0-9]+)*$/
